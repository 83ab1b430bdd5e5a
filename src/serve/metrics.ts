/**
 * Prometheus text exposition (format 0.0.4) of every watcher's counters, labelled with the
 * watched directory and the target table. Counters restart at 0 when a watcher is added again
 * (Prometheus treats that as a counter reset).
 */
import type { WatcherStats } from '../observe/stats.ts';

export interface MetricsSource {
  readonly directory: string;
  readonly table: string;
  readonly stats: WatcherStats;
  /** Epoch ms when the longest-waiting queued file was found; undefined when none waits. */
  readonly oldestQueuedAt: number | undefined;
  /** Live processes watching the directory (this one too), from the lease table. */
  readonly processes?: number;
}

type Kind = 'counter' | 'gauge';

const SIMPLE: readonly { name: string; kind: Kind; help: string; value: (s: MetricsSource, now: number) => number }[] = [
  { name: 'hyperwatch_files_ingested_total', kind: 'counter', help: 'Files committed to the table.', value: (s) => s.stats.filesIngested },
  { name: 'hyperwatch_rows_ingested_total', kind: 'counter', help: 'Rows committed to the table.', value: (s) => s.stats.rowsIngested },
  {
    name: 'hyperwatch_rows_rejected_total',
    kind: 'counter',
    help: 'Rows left out as bad (onBadRows skip), set aside in failed/<name>.rejected.csv.',
    value: (s) => s.stats.rowsRejected,
  },
  { name: 'hyperwatch_bytes_ingested_total', kind: 'counter', help: 'Bytes of the files committed.', value: (s) => s.stats.bytesIngested },
  {
    name: 'hyperwatch_files_failed_total',
    kind: 'counter',
    help: 'Files moved to failed/ with an .error report.',
    value: (s) => s.stats.filesFailed,
  },
  {
    name: 'hyperwatch_retries_total',
    kind: 'counter',
    help: 'Retries of files after a transient database failure.',
    value: (s) => s.stats.retries,
  },
  { name: 'hyperwatch_files_in_flight', kind: 'gauge', help: 'Files being claimed or ingested now.', value: (s) => s.stats.inFlight },
  {
    name: 'hyperwatch_backlog_files',
    kind: 'gauge',
    help: 'Ready files found and waiting for an ingest slot.',
    value: (s) => s.stats.queued,
  },
  {
    name: 'hyperwatch_settling_files',
    kind: 'gauge',
    help: "readyWhen 'stable': files seen that have not yet stayed unchanged for stableMs.",
    value: (s) => s.stats.settling,
  },
  {
    name: 'hyperwatch_settling_longest_seconds',
    kind: 'gauge',
    help: 'How long the longest-settling file has been seen changing, in seconds.',
    value: (s) => s.stats.settlingLongestSeconds,
  },
  {
    name: 'hyperwatch_ignored_files',
    kind: 'gauge',
    help: 'Files of the watched directory that include/exclude leave alone, at the last rescan.',
    value: (s) => s.stats.ignored,
  },
  {
    name: 'hyperwatch_backlog_oldest_age_seconds',
    kind: 'gauge',
    help: 'How long the longest-waiting ready file has waited for a slot (0 when none waits).',
    value: (s, now) => (s.oldestQueuedAt === undefined ? 0 : Math.max(0, (now - s.oldestQueuedAt) / 1000)),
  },
  {
    name: 'hyperwatch_rescans_total',
    kind: 'counter',
    help: 'Directory rescans (timer, lost events, queue overflow).',
    value: (s) => s.stats.rescans,
  },
  {
    name: 'hyperwatch_lost_events_total',
    kind: 'counter',
    help: 'Times the filesystem event source reported lost or failed events.',
    value: (s) => s.stats.lostEvents,
  },
  {
    name: 'hyperwatch_orphan_sentinels_total',
    kind: 'counter',
    help: '.ready files whose data file never appeared.',
    value: (s) => s.stats.orphans,
  },
  {
    name: 'hyperwatch_duplicates_skipped_total',
    kind: 'counter',
    help: 'Files skipped because the table already had their content (skipDuplicateContent).',
    value: (s) => s.stats.duplicatesSkipped,
  },
  {
    name: 'hyperwatch_columns_added_total',
    kind: 'counter',
    help: "Columns added to the table by schema evolution (schemaEvolution 'addColumns').",
    value: (s) => s.stats.columnsAdded,
  },
  {
    name: 'hyperwatch_recovered_total',
    kind: 'counter',
    help: 'Files an earlier run left claimed, finished at start-up.',
    value: (s) => s.stats.recovered,
  },
  {
    name: 'hyperwatch_processes',
    kind: 'gauge',
    help: 'Live processes watching the directory, this one included (from the lease table).',
    value: (s) => s.processes ?? 1,
  },
  {
    name: 'hyperwatch_taken_over_total',
    kind: 'counter',
    help: 'Claims taken over from processes that died.',
    value: (s) => s.stats.takenOver,
  },
  { name: 'hyperwatch_checkpoints_total', kind: 'counter', help: 'Durability checkpoints (Hyper).', value: (s) => s.stats.checkpoints },
  {
    name: 'hyperwatch_waiting_for_database',
    kind: 'gauge',
    help: 'Whether the database cannot be used for now (e.g. another program holds the .hyper file); claimed files are retried.',
    value: (s) => (s.stats.waitingFor ? 1 : 0),
  },
];

/** Label values escaped as the format asks: backslash, double quote, newline. */
function label(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

function number(value: number): string {
  if (value === Infinity) return '+Inf';
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(12)));
}

export function renderMetrics(sources: readonly MetricsSource[], now = Date.now()): string {
  const lines: string[] = [];
  const labels = (s: MetricsSource, extra = '') => `{dir="${label(s.directory)}",table="${label(s.table)}"${extra}}`;
  lines.push(
    '# HELP hyperwatch_watchers Watchers running in this process.',
    '# TYPE hyperwatch_watchers gauge',
    `hyperwatch_watchers ${sources.length}`,
  );
  for (const metric of SIMPLE) {
    lines.push(`# HELP ${metric.name} ${metric.help}`, `# TYPE ${metric.name} ${metric.kind}`);
    for (const s of sources) lines.push(`${metric.name}${labels(s)} ${number(metric.value(s, now))}`);
  }
  const h = 'hyperwatch_ingest_duration_seconds';
  lines.push(`# HELP ${h} Time from claim to commit of each ingested file.`, `# TYPE ${h} histogram`);
  for (const s of sources) {
    const { bounds, counts, sum, count } = s.stats.ingestSeconds;
    let cumulative = 0;
    for (const [i, bound] of [...bounds, Infinity].entries()) {
      cumulative += counts[i] ?? 0;
      lines.push(`${h}_bucket${labels(s, `,le="${number(bound)}"`)} ${cumulative}`);
    }
    lines.push(`${h}_sum${labels(s)} ${number(sum)}`, `${h}_count${labels(s)} ${count}`);
  }
  return `${lines.join('\n')}\n`;
}
