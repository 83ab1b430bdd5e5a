/**
 * Several `hyperwatch watch` processes on one inbox, as a user would run them: each a CLI child
 * with JSON logs, whose lines are kept with the moment they arrived (for takeover times).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STAGING_DIR } from '../../src/constants.ts';
import { filesUnder, leftovers, stagedEntries, waitFor } from './drop.ts';
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

/**
 * Drops `files` files of `perFile` rows each (ids `f * perFile + r`, or that modulo `keys`, so
 * that later files bring keys of earlier ones; column `batch` is `f`), `pauseEvery` files then a
 * short pause; stops early once `onDropped` returns false.
 */
export async function produce(
  dir: string,
  files: number,
  perFile: number,
  onDropped: (n: number) => unknown,
  pauseEvery = 20,
  keys = Number.POSITIVE_INFINITY,
): Promise<void> {
  for (let f = 0; f < files; f++) {
    const rows = Array.from({ length: perFile }, (_, r) => `${(f * perFile + r) % keys},${f}`).join('\n');
    const name = `f-${String(f).padStart(5, '0')}.csv`;
    await writeFile(join(dir, `.${name}.tmp`), `id,batch\n${rows}\n`);
    await rename(join(dir, `.${name}.tmp`), join(dir, name));
    await writeFile(join(dir, `${name}.ready`), '');
    if (onDropped(f + 1) === false) return;
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface KillOutcome {
  readonly members: Member[];
  readonly kills: number;
  readonly processes: number;
  /** Per kill of a process that had its staging folder: ms from SIGKILL to another process's 'took over' line naming it. */
  readonly takeoverMs: number[];
}

/**
 * Three processes on `dir` (started at once: they also race to create the table) while a producer
 * drops `files` files; every 0.4–1.6 s one live process is SIGKILLed (never the last one), and
 * most often another is started. Ends once the inbox and staging are empty and every kill has
 * been taken over. Throws when that does not happen within `withinMs` (give the test more): the
 * error says where it stood and what each process said last, so a run that failed in CI can be
 * read from its failure alone (with `explain()`, what the database says); every process is killed first.
 */
export async function killScenario(o: {
  dir: string;
  table: string;
  leaseMs: number;
  slackMs: number;
  db: readonly string[];
  files: number;
  perFile: number;
  /** Ids modulo this (see `produce`): files then bring keys of earlier ones. */
  keys?: number;
  seed: number;
  minKills: number;
  withinMs: number;
  explain?: () => string;
}): Promise<KillOutcome> {
  const deadline = Date.now() + o.withinMs;
  const members: Member[] = [];
  let serial = 0;
  const spawn = () => members.push(startMember(`p${serial++}`, o.dir, o.table, o.leaseMs, o.db));
  for (let i = 0; i < 3; i++) spawn();
  let dropped = 0;
  let failed = false;
  const producer = produce(
    o.dir,
    o.files,
    o.perFile,
    (n) => {
      dropped = n;
      return !failed;
    },
    20,
    o.keys,
  );
  let seed = o.seed;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // A process killed before it made its staging folder left nothing to take over (its lease row
  // expires and is dropped); every other kill must be taken over.
  const kills: { owner: string; at: number; staged: boolean }[] = [];
  const started = Date.now();
  let phase = 'killing while files arrive';
  const left = (what: string) => {
    const ms = deadline - Date.now();
    if (ms <= 0) throw new Error(`timed out after ${o.withinMs} ms waiting for ${what}`);
    return ms;
  };
  // HYPERWATCH_TEST_FLEET_LOG=<prefix>: every member's log lines and the kills, as JSON, to study a run.
  const dump = () => {
    if (!process.env.HYPERWATCH_TEST_FLEET_LOG) return;
    writeFileSync(
      `${process.env.HYPERWATCH_TEST_FLEET_LOG}-${o.table}.json`,
      JSON.stringify({ kills, members: members.map((m) => ({ name: m.name, owner: m.owner(), lines: m.lines })) }),
    );
  };
  try {
    // Kills go on after the last drop until there were `minKills` (the files may land faster).
    while (dropped < o.files || kills.length < o.minKills) {
      left(`${o.files} files dropped and ${o.minKills} kills (${dropped} dropped, ${kills.length} kills)`);
      await sleep(400 + Math.floor(random() * 1200));
      const live = members.filter((m) => !m.exited && m.owner() !== undefined);
      if (live.length < 2) {
        if (members.filter((m) => !m.exited).length < 3) spawn();
        continue;
      }
      const victim = live[Math.floor(random() * live.length)]!;
      victim.child.kill('SIGKILL');
      const at = Date.now();
      await victim.done;
      kills.push({ owner: victim.owner()!, at, staged: existsSync(join(o.dir, STAGING_DIR, victim.owner()!)) });
      if (random() < 0.6) spawn();
    }
    phase = 'waiting for the producer';
    await producer;
    phase = 'waiting for the inbox and staging to empty';
    await waitFor(
      async () => (await leftovers(o.dir)).length === 0 && (await stagedEntries(o.dir)).length === 0,
      'inbox and staging to empty',
      left('the inbox and staging to empty'),
    );
    phase = 'waiting for every kill to be taken over';
    await waitFor(
      () => kills.every((k) => !k.staged || takeoverOf(members, k.owner) !== undefined),
      'every killed process to be taken over',
      Math.min(o.leaseMs + o.slackMs, left('every kill to be taken over')),
    );
  } catch (error) {
    // Leave no producer and no process behind a failed run.
    failed = true;
    await producer.catch(() => {});
    for (const m of members) if (!m.exited) m.child.kill('SIGKILL');
    await Promise.all(members.map((m) => m.done));
    dump();
    const report = [await standing(o.dir, members, kills, phase, Date.now() - started, dropped), ...(o.explain ? [o.explain()] : [])].join(
      '\n',
    );
    console.error(report);
    throw new Error(`${(error as Error).message}\n${report}`, { cause: error });
  }
  dump();
  const staged = kills.filter((k) => k.staged);
  return { members, kills: kills.length, processes: serial, takeoverMs: staged.map((k) => takeoverOf(members, k.owner)!.at - k.at) };
}

/** Where a failed scenario stood: what was left where, each kill nobody took over, and each process's last words. */
async function standing(
  dir: string,
  members: readonly Member[],
  kills: readonly { owner: string; at: number; staged: boolean }[],
  phase: string,
  ms: number,
  dropped: number,
): Promise<string> {
  const out = [
    `# ${phase} after ${ms} ms: ${dropped} files dropped, ${kills.length} kills, ${members.length} processes; left in the ` +
      `inbox ${(await leftovers(dir)).length}, staged ${(await stagedEntries(dir)).length}`,
  ];
  for (const k of kills.filter((k) => k.staged && takeoverOf(members, k.owner) === undefined)) {
    // Left alone (its folder still there) or emptied by a taker that died before its 'took over' line.
    const folder = join(dir, STAGING_DIR, k.owner);
    const state = existsSync(folder)
      ? `its folder is still there (${(await filesUnder(folder)).length} files in it)`
      : 'its folder is gone';
    out.push(`# not taken over: ${k.owner}, killed at ${new Date(k.at).toISOString()}; ${state}`);
  }
  out.push(`# staging folders now: ${(await readdir(join(dir, STAGING_DIR)).catch(() => [])).join(' ') || 'none'}`);
  for (const m of members) {
    const said = m.lines.filter((l) => l.message !== 'ingested' && !l.message.startsWith('recovered')).slice(-6);
    const last = m.lines.at(-1);
    out.push(
      `# ${m.name} (${m.owner() ?? 'no lease'}${m.exited ? ', exited' : ''}; ${m.lines.length} lines, the last ` +
        `at ${last ? new Date(last.at).toISOString() : '-'}): ` +
        `${said.map((l) => `${new Date(l.at).toISOString()} ${l.message} ${JSON.stringify(l.fields).slice(0, 200)}`).join(' | ')}`,
    );
  }
  return out.join('\n');
}

/** SIGTERM to every member still running (SIGCONT first, for a stopped one); waits for all. */
export async function stopAll(members: readonly Member[]): Promise<void> {
  for (const m of members) {
    if (m.exited) continue;
    m.child.kill('SIGCONT');
    m.child.kill('SIGTERM');
  }
  await Promise.all(members.map((m) => m.done));
}

/**
 * After `stopAll`: asserts that every member either was SIGKILLed or stopped with exit 0 on its
 * SIGTERM (also one still starting), and returns the owners that stopped so. A SIGTERM that comes
 * while the runtime still loads the program, before any lease, ends it as signals do: it held nothing.
 */
export async function cleanStops(members: readonly Member[]): Promise<Set<string | undefined>> {
  const runs = await Promise.all(members.map(async (m) => ({ owner: m.owner(), run: await m.done })));
  for (const r of runs)
    assert.ok(
      r.run.signal === 'SIGKILL' || r.run.code === 0 || (r.owner === undefined && r.run.signal === 'SIGTERM'),
      `${r.owner}: a SIGTERM stops with exit 0, got ${r.run.signal ?? r.run.code}`,
    );
  return new Set(runs.filter((r) => r.run.signal === null).map((r) => r.owner));
}
