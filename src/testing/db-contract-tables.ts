/**
 * Contract cases on tables (see db-contract.ts): every logical type spelled as a column type the
 * database takes, tables described by their exact name, and any table and column name quoted.
 */
import assert from 'node:assert/strict';
import { qualifiedName, quoteIdent } from '../columns/sql.ts';
import type { ContractCase } from '../testing.ts';
import type { DbAdapter, DbPool, LogicalType, TableName } from '../types.ts';
import { chunks } from './db-contract-copy.ts';

const EVERY_TYPE: readonly LogicalType[] = [
  { kind: 'boolean' },
  { kind: 'smallint' },
  { kind: 'integer' },
  { kind: 'bigint' },
  { kind: 'real' },
  { kind: 'double' },
  { kind: 'decimal', precision: 18, scale: 3 },
  { kind: 'text' },
  { kind: 'json' },
  { kind: 'bytes' },
  { kind: 'date' },
  { kind: 'time' },
  { kind: 'timestamp' },
  { kind: 'timestamptz' },
];

/** The case that creates a table of every logical type and describes it back. */
export function everyTypeCase(p: () => DbPool, db: () => DbAdapter, nextTable: (label: string) => string): ContractCase {
  return {
    name: 'spells every logical type as a column type the database takes, and describes it back',
    async run() {
      const table = nextTable('types');
      await p().query(`CREATE TABLE ${table} (${EVERY_TYPE.map((t, i) => `c${i} ${db().sqlType(t)}`).join(', ')})`);
      const columns = await p().transaction((conn) => conn.describeTable({ name: table }));
      assert.deepEqual(
        columns?.map((c) => c.name),
        EVERY_TYPE.map((_, i) => `c${i}`),
      );
      assert.ok(columns!.every((c) => c.nullable && c.sqlType.length > 0));
    },
  };
}

/** The cases on naming and describing tables. */
export function tableNameCases(
  p: () => DbPool,
  nextTable: (label: string) => string,
  count: (table: string) => Promise<number>,
): ContractCase[] {
  return [
    {
      name: 'describes a table by its exact (case-sensitive) name (and which columns the database fills), or null when it is missing',
      async run() {
        const name = nextTable('MiXed');
        await p().query(`CREATE TABLE ${quoteIdent(name)} ("Id" BIGINT NOT NULL, note TEXT, n INTEGER NOT NULL DEFAULT 7)`);
        const cols = await p().transaction((conn) => conn.describeTable({ name }));
        assert.deepEqual(
          cols?.map(({ name, sqlType, nullable }) => ({ name, sqlType, nullable })),
          [
            { name: 'Id', sqlType: 'bigint', nullable: false },
            { name: 'note', sqlType: 'text', nullable: true },
            { name: 'n', sqlType: 'integer', nullable: false },
          ],
        );
        // Optional, but when said it must be right: a column with a DEFAULT is filled by the database.
        assert.deepEqual(
          cols?.map((c) => c.filledByDatabase ?? 'unsaid'),
          cols?.[0]?.filledByDatabase === undefined ? ['unsaid', 'unsaid', 'unsaid'] : [false, false, true],
        );
        assert.deepEqual(await p().transaction((conn) => conn.describeTable({ schema: 'public', name })), cols);
        assert.equal(await p().transaction((conn) => conn.describeTable({ name: name.toLowerCase() })), null);
      },
    },
    {
      name: 'takes any table and column name, quoted: spaces, quotes, backslashes, capitals, non-ASCII',
      async run() {
        // An apostrophe and a backslash too: describeTable may put the name into its SQL as a literal.
        for (const odd of [`"quoted" O'Brien Ünï`, 'back\\slash\\']) {
          const table: TableName = { name: `${nextTable('odd')} ${odd}` };
          await p().query(`CREATE TABLE ${qualifiedName(table)} (${quoteIdent('a "b"')} BIGINT, ${quoteIdent('Ça va')} TEXT)`);
          const loaded = await p().transaction((conn) =>
            conn.copyFrom(`COPY ${qualifiedName(table)} FROM STDIN WITH (FORMAT csv)`, chunks('1,x\n2,"y, z"\n')),
          );
          assert.equal(loaded, 2);
          assert.deepEqual(
            (await p().transaction((conn) => conn.describeTable(table)))?.map((c) => c.name),
            ['a "b"', 'Ça va'],
            table.name,
          );
          assert.equal(await count(qualifiedName(table)), 2);
        }
      },
    },
  ];
}
