/**
 * What the watcher knows about its target table (src/watcher/table-knowledge.ts), on its own: the
 * cached description a transaction is served, what it learns kept only when it commits, and the
 * columns reported added once. The connection below is a stand-in that records calls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DbConnection, TableColumn, TableName } from '../../../src/types.ts';
import { type Described, sameTable, TableKnowledge } from '../../../src/watcher/table-knowledge.ts';

const columns: TableColumn[] = [
  { name: 'id', sqlType: 'bigint', nullable: false },
  { name: 'note', sqlType: 'text', nullable: true },
];

/** A connection whose `describeTable` answers `columns` for every table, counting the calls. */
function recording(): { conn: DbConnection; described: TableName[]; log: string[] } {
  const described: TableName[] = [];
  const log: string[] = [];
  const conn: DbConnection = {
    query: async () => [],
    execute: async (sql) => {
      log.push(`execute ${sql}`);
      return 1;
    },
    copyFrom: async () => 0,
    describeTable: async (table) => {
      described.push(table);
      return columns.map((c) => ({ ...c }));
    },
  };
  return { conn, described, log };
}

const fresh = (): Described => ({ columns: undefined, usedCache: false });

describe('TableKnowledge', () => {
  it('names the same table with or without the default schema', () => {
    assert.equal(sameTable({ name: 't' }, { name: 't', schema: 'public' }), true);
    assert.equal(sameTable({ name: 't' }, { name: 'T' }), false);
    assert.equal(sameTable({ name: 't', schema: 'a' }, { name: 't' }), false);
  });

  it('until it knows the columns, a transaction describes the table and what it read is noted for after its commit', async () => {
    const known = new TableKnowledge({ name: 'events' });
    const { conn, described } = recording();
    const learned = fresh();
    const got = await known.describing(conn, learned).describeTable({ name: 'events' });
    assert.deepEqual(got, columns);
    assert.equal(described.length, 1);
    assert.deepEqual(learned, { columns, usedCache: false });
    assert.notEqual(learned.columns![0], got![0], 'the transaction and the cache hold copies of their own');
  });

  it('once it remembers them, serves copies without asking the database, and says the cache was used', async () => {
    const known = new TableKnowledge({ name: 'events' });
    const remembered = columns.map((c) => ({ ...c }));
    known.remember(remembered);
    const { conn, described } = recording();
    const learned = fresh();
    const view = known.describing(conn, learned);
    const first = await view.describeTable({ name: 'events', schema: 'public' });
    const second = await view.describeTable({ name: 'events' });
    assert.deepEqual(first, columns);
    assert.deepEqual(second, columns);
    assert.notEqual(first![0], second![0], 'each call a copy: a plugin changing one changes nothing else');
    assert.notEqual(first![0], remembered[0]);
    assert.equal(described.length, 0);
    assert.deepEqual(learned, { columns: undefined, usedCache: true });
    // Another table is always asked for.
    await view.describeTable({ name: 'other' });
    assert.deepEqual(described, [{ name: 'other' }]);
    known.forget();
    await known.describing(conn, fresh()).describeTable({ name: 'events' });
    assert.equal(described.length, 2, 'forgotten: asked again');
  });

  it('runs afterExecute right after each execute is handed over, before its reply', async () => {
    const known = new TableKnowledge({ name: 'events' });
    const { conn, log } = recording();
    const view = known.describing(conn, fresh(), () => log.push('after'));
    const pending = view.execute('INSERT 1');
    log.push('returned');
    await pending;
    assert.deepEqual(log, ['execute INSERT 1', 'after', 'returned']);
  });

  it('learns once that the table exists, and reports each added column once', () => {
    const known = new TableKnowledge({ name: 'events' });
    assert.equal(known.exists, false);
    known.found();
    assert.equal(known.exists, true);
    assert.equal(known.firstAdded('extra'), true);
    assert.equal(known.firstAdded('extra'), false);
    assert.equal(known.firstAdded('more'), true);
  });

  it('lets one transaction at a time hold the schema lock', async () => {
    const known = new TableKnowledge({ name: 'events' });
    const order: string[] = [];
    const release = await known.lockSchema();
    const second = known.lockSchema().then((r) => {
      order.push('second');
      r();
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    order.push('first done');
    release();
    await second;
    assert.deepEqual(order, ['first done', 'second']);
  });
});
