/**
 * A hyperd started by hand, as a user (or Tableau's Hyper API) would run one: its own user, with or
 * without a password, on a fixed loopback port. hyperwatch reaches it with `--endpoint`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { locateHyperd } from '../../adapters/db/hyper/locate.ts';

export interface StandaloneHyperd {
  readonly port: number;
  readonly child: ChildProcess;
  /** Why it exited, if it did before `stop` (its exit code or signal and the end of its output). */
  exitedEarly(): string | undefined;
  stop(): Promise<void>;
}

/**
 * Starts `hyperd run` with `--init-user=<user>`; with `password` it is typed on hyperd's prompt
 * (hyperd then asks every client for it), without it `--no-password`.
 */
export async function startStandaloneHyperd(options: {
  user: string;
  password?: string;
  logDir: string;
  /** Runs hyperd through another command (e.g. in a mount namespace of its own): the argv to spawn. */
  wrap?: (command: string, args: readonly string[]) => readonly string[];
}): Promise<StandaloneHyperd> {
  const located = locateHyperd();
  if (!located.ok) throw new Error(located.message);
  const args = [
    'run',
    '--skip-license',
    `--init-user=${options.user}`,
    '--listen-connection',
    'tab.tcp://127.0.0.1:0',
    `--log-dir=${options.logDir}`,
  ];
  if (options.password === undefined) args.push('--no-password');
  const [command, ...rest] = options.wrap ? options.wrap(located.path, args) : [located.path, ...args];
  const child = spawn(command!, rest, { stdio: ['pipe', 'pipe', 'pipe'] });
  if (options.password !== undefined) child.stdin!.write(`${options.password}\n${options.password}\n`);
  child.stdin!.end();
  let output = '';
  let stopping = false;
  let early: string | undefined;
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output = (output + d).slice(-4000)));
  child.once('exit', (code, signal) => {
    if (!stopping) early = `hyperd exited (code ${code}, signal ${signal}): ${output}`;
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hyperd did not start: ${output}`)), 30000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      output = (output + d).slice(-4000);
      const match = /listening to 127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`hyperd exited (${code}): ${output}`)));
  });
  return {
    port,
    child,
    exitedEarly: () => early,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
