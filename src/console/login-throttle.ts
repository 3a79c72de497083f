/**
 * Sign-in throttling of the console: the rules live in the domain (src/domain/users/login-throttle.ts,
 * used by the sign-in and password reset commands); re-exported here for the console's tests.
 */
export { clearLoginFailures, loginBlockedFor, PER_ADDRESS, PER_EMAIL, recordLoginFailure, WINDOW_MS } from '../domain/users/login-throttle.ts';
