/**
 * renderMetrics on its own: the Prometheus text /metrics serves (backlog, cumulative buckets,
 * escaped label values, schema evolution), read back sample by sample. No server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderMetrics } from '../../../src/serve/metrics.ts';
import { emptyStats, observe } from '../../../src/observe/stats.ts';
import { metric, parseMetrics } from '../../helpers/prometheus-text.ts';

describe('renderMetrics', () => {
  it('reports the backlog and its oldest age, cumulative buckets, and escapes label values', () => {
    const stats = emptyStats(4);
    stats.queued = 7;
    stats.inFlight = 4;
    for (const seconds of [0.003, 0.2, 0.2, 400]) observe(stats.ingestSeconds, seconds);
    const now = 1_000_000;
    const dir = '/srv/in "quoted"\\dir';
    const samples = parseMetrics(renderMetrics([{ directory: dir, table: 't', stats, oldestQueuedAt: now - 12_500 }], now));
    const labels = { dir, table: 't' };
    assert.equal(metric(samples, 'hyperwatch_backlog_files', labels), 7);
    assert.equal(metric(samples, 'hyperwatch_backlog_oldest_age_seconds', labels), 12.5);
    assert.equal(metric(samples, 'hyperwatch_files_in_flight', labels), 4);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_bucket', { ...labels, le: '0.005' }), 1);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_bucket', { ...labels, le: '0.1' }), 1);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_bucket', { ...labels, le: '0.25' }), 3);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_bucket', { ...labels, le: '300' }), 3);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_bucket', { ...labels, le: '+Inf' }), 4);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_count', labels), 4);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_sum', labels), 400.403);
  });

  it('counts the columns schema evolution added', () => {
    const stats = emptyStats(4);
    stats.columnsAdded = 2;
    const samples = parseMetrics(renderMetrics([{ directory: '/in', table: 't', stats, oldestQueuedAt: undefined }], 0));
    assert.equal(metric(samples, 'hyperwatch_columns_added_total', { dir: '/in', table: 't' }), 2);
  });
});
