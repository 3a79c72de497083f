/**
 * JSON Schemas of the three error body shapes of api.md part 7, for the OpenAPI document.
 */
export const errorSchemas = {
  detail: {
    content: { 'application/json': { schema: { type: 'object', required: ['detail'], properties: { detail: { type: 'string' } } } } },
  },
  validation: {
    content: {
      'application/json': {
        schema: {
          type: 'object',
          properties: {
            detail: {
              type: 'array',
              items: {
                type: 'object',
                required: ['loc', 'msg', 'type'],
                properties: {
                  loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
                  msg: { type: 'string' },
                  type: { type: 'string' },
                  input: {},
                  ctx: { type: 'object' },
                },
              },
            },
          },
        },
      },
    },
  },
  rateLimit: {
    content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } },
  },
} as const;
