/**
 * A throwaway PostgreSQL cluster for one test file: `initdb` into a temp directory, a free loopback
 * port, the unix socket in the temp directory (never /var/run/postgresql), `pg_ctl start -w`, one
 * database, and a URL for it. `stop()` (also run at process exit) ends the server and removes
 * everything.
 *
 * The binaries come from Debian's `postgresql` package (`/usr/lib/postgresql/<version>/bin`), or
 * from `HYPERWATCH_PG_BIN`. Without them this fails loudly: these tests never skip.
 *
 * PostgreSQL refuses to run as root, so as root (CI) the server runs as the `postgres` user the
 * Debian package creates (else `nobody`): the temp directory is handed to that user, and
 * `initdb`/`pg_ctl` are spawned with its uid and gid.
 *
 * Under `npm test`, the clusters are copies of one that `initdb` made once (see templateData): a
 * copy instead of initdb takes a cluster's start from about 1.9 to 1.4 CPU-s (2.25 to 1.74 s), and
 * the suite starts some 40 clusters on 2 cores.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';

export const PG_MISSING_MESSAGE =
  'PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found under /usr/lib/postgresql/*/bin. ' +
  'The PostgreSQL tests need a real server: install it with `apt-get install -y postgresql` ' +
  '(or set HYPERWATCH_PG_BIN to a directory holding initdb and pg_ctl).';

/** The directory holding `initdb`, `pg_ctl` and `postgres`: `HYPERWATCH_PG_BIN`, else the newest Debian one. */
export function findPgBin(): string {
  const wanted = ['initdb', 'pg_ctl', 'postgres'];
  const complete = (dir: string) => wanted.every((b) => existsSync(join(dir, b)));
  const override = process.env.HYPERWATCH_PG_BIN;
  if (override) {
    if (!complete(override)) throw new Error(`HYPERWATCH_PG_BIN=${override} lacks one of ${wanted.join(', ')}. ${PG_MISSING_MESSAGE}`);
    return override;
  }
  let versions: string[] = [];
  try {
    versions = readdirSync('/usr/lib/postgresql');
  } catch {
    // no PostgreSQL at all
  }
  const dirs = versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join('/usr/lib/postgresql', v, 'bin'))
    .filter(complete);
  if (dirs.length === 0) throw new Error(PG_MISSING_MESSAGE);
  return dirs[0]!;
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
  readonly name: string;
}

/** As root: the unprivileged user the server runs as (`postgres`, else `nobody`). Otherwise: ourselves. */
function serverUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'));
  for (const name of ['postgres', 'nobody']) {
    const entry = passwd.find((fields) => fields[0] === name);
    if (entry) return { name, uid: Number(entry[2]), gid: Number(entry[3]) };
  }
  throw new Error('running as root, but neither a "postgres" nor a "nobody" user exists to run PostgreSQL as (it refuses to run as root)');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Run {
  readonly code: number | null;
  readonly output: string;
}

function run(binary: string, args: readonly string[], as: RunAs | undefined, cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', HOME: cwd },
      ...(as ? { uid: as.uid, gid: as.gid } : {}),
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

async function chownTree(path: string, as: RunAs | undefined): Promise<void> {
  if (as) await chown(path, as.uid, as.gid);
}

export interface PostgresServer {
  /** `postgres://hyperwatch:<password>@127.0.0.1:<port>/hyperwatch_test` (TCP, password auth). */
  readonly url: string;
  readonly password: string;
  readonly port: number;
  readonly database: string;
  /** The temp directory holding the cluster, its socket and its log. */
  readonly root: string;
  /** The server's major version, e.g. 15. */
  readonly version: number;
  /** `pg_ctl restart -m fast`: every session is terminated, the server is away for a moment. */
  restart(): Promise<void>;
  /** Stops the server and removes the temp directory. Idempotent. */
  stop(): Promise<void>;
}

/** Live clusters, stopped (SIGQUIT: immediate shutdown) and removed at process exit in any case. */
const live = new Set<{ root: string; data: string }>();
let exitHook = false;

function killAtExit(): void {
  for (const cluster of live) {
    try {
      const pid = Number(readFileSync(join(cluster.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // already stopped
    }
    rmSync(cluster.root, { recursive: true, force: true });
  }
  live.clear();
}

/**
 * The 'exit' hook does not run when the test process is killed (a timeout, Ctrl-C, SIGKILL): a
 * small shell waits for this process to go, then stops the server (SIGQUIT to the postmaster is an
 * immediate shutdown) and removes the cluster's directory. Killed by `stop()` when all went well.
 */
function watchdog(root: string, data: string): ChildProcess {
  const script = `
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    pid=$(head -n 1 "$2/postmaster.pid" 2>/dev/null)
    if [ -n "$pid" ]; then
      kill -QUIT "$pid" 2>/dev/null
      i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
    fi
    rm -rf "$3"`;
  const child = spawn('sh', ['-c', script, 'hyperwatch-pg-watchdog', String(process.pid), data, root], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

/** initdb's arguments after `-D <dir>`: password auth over TCP, trust on the socket (only the server's user reaches it). */
const INITDB_ARGS = ['-U', 'hyperwatch', '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C', '--no-sync'];

/**
 * A data directory that initdb made, to copy for a cluster: kept in the folder named by
 * HYPERWATCH_PG_TEMPLATE (which scripts/test.mjs makes for the run and removes after it), one per
 * binaries, initdb arguments and server user, made by the first test process that needs it (built
 * aside, then renamed into place: a process that loses the race uses the winner's). Undefined
 * without HYPERWATCH_PG_TEMPLATE: each cluster then runs initdb itself.
 */
async function templateData(bin: string, as: RunAs | undefined): Promise<string | undefined> {
  const folder = process.env.HYPERWATCH_PG_TEMPLATE;
  if (!folder) return undefined;
  const key = createHash('sha256')
    .update(JSON.stringify([bin, INITDB_ARGS, as?.name ?? null]))
    .digest('hex')
    .slice(0, 16);
  const made = join(folder, key);
  if (existsSync(join(made, 'data', 'PG_VERSION'))) return join(made, 'data');
  const building = await mkdtemp(join(folder, 'building-'));
  try {
    await chmod(building, 0o755);
    await chownTree(building, as);
    const init = await run(join(bin, 'initdb'), ['-D', join(building, 'data'), ...INITDB_ARGS], as, building);
    if (init.code !== 0) throw new Error(`initdb of the template cluster (as ${as?.name ?? 'the current user'}) failed:\n${init.output}`);
    await rename(building, made).catch(() => undefined); // taken: another process made it first
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return join(made, 'data');
}

/** Starts a fresh cluster with one database. Fails (with the server's log) if it cannot. */
export async function startPostgres(options: { database?: string } = {}): Promise<PostgresServer> {
  const bin = findPgBin();
  const as = serverUser();
  const database = options.database ?? 'hyperwatch_test';
  const root = await mkdtemp(join(tmpdir(), 'hyperwatch-pg-'));
  const data = join(root, 'data');
  const sockets = join(root, 'sockets');
  const log = join(root, 'server.log');
  const cluster = { root, data };
  live.add(cluster);
  const guard = watchdog(root, data);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', killAtExit);
  }
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  let port = 0;
  const pgCtl = (...args: string[]) => run(join(bin, 'pg_ctl'), ['-D', data, ...args], as, root);
  const fail = async (what: string, output: string): Promise<never> => {
    const serverLog = await readFile(log, 'utf8').catch(() => '');
    throw new Error(`${what} failed:\n${output}\n--- server log (${log}) ---\n${serverLog.split('\n').slice(-30).join('\n')}`);
  };

  try {
    await chownTree(root, as);
    await mkdir(sockets);
    await chownTree(sockets, as);
    const template = await templateData(bin, as);
    const made = template
      ? await run('cp', ['-a', template, data], as, root)
      : await run(join(bin, 'initdb'), ['-D', data, ...INITDB_ARGS], as, root);
    if (made.code !== 0)
      await fail(template ? `copying the template cluster ${template}` : `initdb (as ${as?.name ?? 'the current user'})`, made.output);

    // A free port can be taken between our probe and the server's bind: try a few.
    for (let tries = 1; ; tries++) {
      port = await freePort();
      // fsync off: a throwaway cluster; the restarts tested here are server restarts, which keep
      // the OS page cache, so fsync changes nothing but speed. No parallel query: a scan of a big
      // table (a test's reader polling COUNT(*)) forks two worker processes each time, and on
      // 2 cores that cost more than the scan (mode-postgres's reader: 47 against 29 CPU-s).
      const serverOptions = [
        `-p ${port} -k ${sockets}`,
        '-c listen_addresses=127.0.0.1',
        '-c fsync=off',
        '-c full_page_writes=off',
        '-c max_connections=100',
        '-c max_parallel_workers_per_gather=0',
      ].join(' ');
      const start = await pgCtl('start', '-w', '-t', '60', '-l', log, '-o', serverOptions);
      if (start.code === 0) break;
      if (tries >= 3) await fail('pg_ctl start', start.output);
    }

    const url = `postgres://hyperwatch:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
    // Through the socket (trust): the role gets this cluster's own password, which the URL's
    // password auth over TCP then needs.
    const admin = postgres({
      path: join(sockets, `.s.PGSQL.${port}`),
      user: 'hyperwatch',
      database: 'postgres',
      max: 1,
      onnotice: () => {},
      fetch_types: false,
    });
    let version = 0;
    try {
      await admin.unsafe(`ALTER ROLE hyperwatch PASSWORD '${password}'`);
      await admin.unsafe(`CREATE DATABASE "${database}"`);
      const [row] = await admin.unsafe<{ v: string }[]>("SELECT current_setting('server_version_num') AS v");
      version = Math.floor(Number(row!.v) / 10000);
    } finally {
      await admin.end({ timeout: 5 });
    }

    let stopped = false;
    return {
      url,
      password,
      port,
      database,
      root,
      version,
      async restart() {
        const restarted = await pgCtl('restart', '-w', '-t', '60', '-m', 'fast', '-l', log);
        if (restarted.code !== 0) await fail('pg_ctl restart', restarted.output);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          const result = await pgCtl('stop', '-w', '-t', '30', '-m', 'fast');
          if (result.code !== 0) await pgCtl('stop', '-w', '-m', 'immediate');
        } finally {
          live.delete(cluster);
          guard.kill();
          await rm(root, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await pgCtl('stop', '-w', '-m', 'immediate').catch(() => undefined);
    live.delete(cluster);
    guard.kill();
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}
