/** A provider payload of the wrong shape: the webhook route answers 400 with this message. */
export class PayloadError extends Error {}
