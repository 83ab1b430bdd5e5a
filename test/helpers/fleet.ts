/**
 * Several `hyperwatch watch` processes on one inbox, as a user would run them: each a CLI child
 * with JSON logs, whose lines are kept with the moment they arrived (for takeover times).
 */
import type { ChildProcess } from 'node:child_process';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, type Run } from './proc.ts';

export interface LogLine {
  readonly at: number;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

export interface Member {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  readonly done: Promise<Run>;
  /** Its owner id, once its lease is taken. */
  owner(): string | undefined;
  exited: boolean;
}

/** Starts `hyperwatch watch <dir> --table <table> --lease <leaseMs> --log-format json ...db`. */
export function startMember(name: string, dir: string, table: string, leaseMs: number, db: readonly string[]): Member {
  const { child, done } = cli(['watch', dir, '--table', table, '--lease', String(leaseMs), '--log-format', 'json', ...db]);
  const lines: LogLine[] = [];
  let buffer = '';
  child.stderr!.on('data', (d: string) => {
    buffer += d;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        const { message, ...fields } = JSON.parse(text) as { message: string } & Record<string, unknown>;
        lines.push({ at: Date.now(), message, fields });
      } catch {
        lines.push({ at: Date.now(), message: text, fields: {} });
      }
    }
  });
  const member: Member = {
    name,
    child,
    lines,
    done,
    exited: false,
    owner: () => lines.find((l) => l.message === 'lease taken')?.fields.owner as string | undefined,
  };
  void done.then(() => (member.exited = true));
  return member;
}

/** Drops `files` files of `perFile` rows each (ids `f * perFile + r`), `pauseEvery` files then a short pause. */
export async function produce(dir: string, files: number, perFile: number, onDropped: (n: number) => void, pauseEvery = 20): Promise<void> {
  for (let f = 0; f < files; f++) {
    const rows = Array.from({ length: perFile }, (_, r) => `${f * perFile + r},${f}`).join('\n');
    const name = `f-${String(f).padStart(5, '0')}.csv`;
    await writeFile(join(dir, `.${name}.tmp`), `id,batch\n${rows}\n`);
    await rename(join(dir, `.${name}.tmp`), join(dir, name));
    await writeFile(join(dir, `${name}.ready`), '');
    onDropped(f + 1);
    if (f % pauseEvery === 0) await new Promise((r) => setTimeout(r, 5));
  }
}

/** The first 'took over' line of any member naming `owner`, with when it arrived. */
export function takeoverOf(members: readonly Member[], owner: string): { by: string; at: number; from: string } | undefined {
  for (const m of members) {
    for (const l of m.lines) {
      if (l.message === 'took over' && String(l.fields.from).includes(owner)) return { by: m.name, at: l.at, from: String(l.fields.from) };
    }
  }
  return undefined;
}
