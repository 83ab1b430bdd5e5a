/**
 * Where the API listens: a TCP address, or a Unix socket of mode 0600, which only the service's
 * user (and root) can connect to, whatever the other local users run.
 */
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import process from 'node:process';

export interface ListenTarget {
  readonly host: string;
  readonly port: number;
  /** When set, the socket's path; host and port are not used. */
  readonly socket?: string;
}

/** `unix:<path>` for a socket, else `http://host:port` with the port actually bound. */
export async function listenOn(server: Server, target: ListenTarget): Promise<string> {
  if (target.socket === undefined) {
    await bind(server, () => server.listen(target.port, target.host));
    const { port } = server.address() as AddressInfo;
    return `http://${target.host.includes(':') ? `[${target.host}]` : target.host}:${port}`;
  }
  const path = target.socket;
  await removeStaleSocket(path);
  // The umask makes the socket 0600 from its creation on; the chmod covers runtimes without umask.
  const umask = setUmask(0o177);
  try {
    await bind(server, () => server.listen(path));
  } finally {
    if (umask !== undefined) setUmask(umask);
  }
  chmodSync(path, 0o600);
  return `unix:${path}`;
}

function bind(server: Server, listen: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
    listen();
  });
}

function setUmask(mask: number): number | undefined {
  try {
    return process.umask(mask);
  } catch {
    return undefined;
  }
}

/** A socket file left by a service that died is removed; a live one, or any other file, is not. */
async function removeStaleSocket(path: string): Promise<void> {
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    return;
  }
  if (!stats.isSocket()) throw new Error(`http.socket ${path} exists and is not a socket; remove it or choose another path`);
  const alive = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) throw new Error(`http.socket ${path} is in use by a running service`);
  unlinkSync(path);
}
