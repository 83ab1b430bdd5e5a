/** The `endpoint` string of a running hyperd: `[user@]host:port`; the password comes from elsewhere. */
import type { Endpoint } from './hyperd.ts';

/** The environment variable the endpoint's password is read from. */
export const ENDPOINT_PASSWORD_ENV = 'HYPERWATCH_ENDPOINT_PASSWORD';

/** A running hyperd: where it listens and, when given, whom to connect as. */
export interface EndpointSpec extends Endpoint {
  readonly user?: string;
}

/** `host:port`, `user@host:port`, `tab.tcp://host:port`, `[::1]:port`. A password is refused here. */
export function parseEndpoint(value: string): EndpointSpec {
  const match = /^(?:tab\.tcp:\/\/)?(?:([^@:/\s]+)@)?\[?([^\]@\s]+?)\]?:(\d{1,5})$/.exec(value.trim());
  if (!match || Number(match[3]) > 65535) {
    const secret = /^(?:tab\.tcp:\/\/)?[^@:/\s]+:[^@]*@/.test(value.trim());
    throw new Error(
      secret
        ? `invalid endpoint: a password does not go in the endpoint; give user@host:port and set ${ENDPOINT_PASSWORD_ENV}`
        : `invalid endpoint ${JSON.stringify(value)}: expected host:port or user@host:port`,
    );
  }
  return { host: match[2]!, port: Number(match[3]), ...(match[1] ? { user: decodeURIComponent(match[1]) } : {}) };
}
