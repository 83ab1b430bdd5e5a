/**
 * Table names as Tableau users write them (`Order Items`, `Straße`, `sales."Q1.2024"`), run as a
 * user would: the CLI's watch, query and history, and serve with its HTTP API, on a real hyperd.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { dropFile } from '../../../src/producer/drop.ts';
import { parseTableName, qualifiedName, tableLabel } from '../../../src/columns/sql.ts';
import { csv, waitFor } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli, jsonLogLines } from '../../helpers/proc.ts';

describe('table names: parsing', () => {
  const cases: [string, { schema?: string; name: string }][] = [
    ['events', { name: 'events' }],
    ['Order Items', { name: 'Order Items' }],
    ['Straße ✓', { name: 'Straße ✓' }],
    ['1st quarter', { name: '1st quarter' }],
    ['sales.orders', { schema: 'sales', name: 'orders' }],
    ['Sales Dept.Order Items', { schema: 'Sales Dept', name: 'Order Items' }],
    ['"a.b"', { name: 'a.b' }],
    ['sales."Q1.2024"', { schema: 'sales', name: 'Q1.2024' }],
    ['"my.schema"."x.y"', { schema: 'my.schema', name: 'x.y' }],
    ['"say ""hi"""', { name: 'say "hi"' }],
  ];
  for (const [input, expected] of cases) {
    it(`reads ${input}, and its label reads back the same`, () => {
      const parsed = parseTableName(input);
      assert.ok(parsed.isOk(), parsed.isErr() ? parsed.error : '');
      assert.deepEqual({ ...parsed.value }, expected);
      const again = parseTableName(tableLabel(parsed.value));
      assert.ok(again.isOk());
      assert.deepEqual({ ...again.value }, expected);
    });
  }

  it('quotes every part in SQL, doubling quotes', () => {
    assert.equal(qualifiedName({ schema: 'my.schema', name: 'say "hi"' }), '"my.schema"."say ""hi"""');
  });

  const refused: [string, RegExp][] = [
    ['', /it is empty/],
    ['sales.', /a part is empty/],
    ['a.b.c', /2 dots outside double quotes/],
    ['a\u0000b', /control character/],
    ['line\nbreak', /control character/],
    ['x'.repeat(64), /longer than 63 bytes/],
    ['é'.repeat(32), /longer than 63 bytes/],
    ['"open', /double quote is not closed/],
    ['"a"b', /text follows a closing double quote/],
    ['a"b', /holds a double quote/],
  ];
  for (const [input, message] of refused) {
    it(`refuses ${JSON.stringify(input).slice(0, 30)}, saying why and how to write it`, () => {
      const parsed = parseTableName(input);
      assert.ok(parsed.isErr());
      assert.match(parsed.error, /^invalid table name /);
      assert.match(parsed.error, message);
      assert.match(parsed.error, /put a part that holds a dot in double quotes/);
    });
  }

  it('accepts a 63-byte name', () => {
    assert.ok(parseTableName('x'.repeat(63)).isOk());
  });
});

describe('table names: end to end on a real hyperd', () => {
  const tmp = useTempDir('hyperwatch-names-');

  it('watch, query and history work with "Order Items" and with a dotted name in a schema', async () => {
    const inbox = await tmp.dir('items');
    const db = tmp.path('items.hyper');
    await dropFile(
      inbox,
      'a.csv',
      csv('id,name', [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    const first = await cli(['watch', inbox, '--table', 'Order Items', '--database', db, '--once', '--json', '--quiet']).done;
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).table, 'Order Items');
    await dropFile(inbox, 'b.csv', csv('id,name', [[3, 'ß']]));
    const second = await cli(['watch', inbox, '--table', 'Sales Dept."Q1.2024"', '--database', db, '--once', '--json', '--quiet']).done;
    assert.equal(second.code, 0, second.stderr);

    const rows = await cli(['query', '--database', db, '--json', 'SELECT COUNT(*) AS n FROM "Order Items"']).done;
    assert.equal(rows.code, 0, rows.stderr);
    assert.deepEqual(JSON.parse(rows.stdout), [{ n: '2' }]);
    const dotted = await cli(['query', '--database', db, '--json', 'SELECT name FROM "Sales Dept"."Q1.2024"']).done;
    assert.deepEqual(JSON.parse(dotted.stdout), [{ name: 'ß' }]);

    const history = await cli(['history', '--database', db, '--table', 'Order Items', '--json']).done;
    assert.equal(history.code, 0, history.stderr);
    assert.deepEqual(
      (JSON.parse(history.stdout) as { file: string; table: string }[]).map((e) => [e.file, e.table]),
      [['a.csv', 'Order Items']],
    );
    const quoted = await cli(['history', '--database', db, '--table', '"Sales Dept"."Q1.2024"', '--json']).done;
    assert.deepEqual(
      (JSON.parse(quoted.stdout) as { file: string; table: string }[]).map((e) => [e.file, e.table]),
      [['b.csv', 'Sales Dept."Q1.2024"']],
    );
  });

  it('refuses a name no database takes, with exit code 2 and the rule', async () => {
    const run = await cli(['watch', tmp.path(), '--table', 'a.b.c']).done;
    assert.equal(run.code, 2);
    assert.match(run.stderr, /invalid table name "a\.b\.c": it has 2 dots outside double quotes.*"a\.b"/);
  });

  it('serve takes "Order Items" in its config and in POST /watchers', async () => {
    const inbox = await tmp.dir('serve-items');
    const added = await tmp.dir('serve-added');
    const config = tmp.path('serve.json');
    await writeFile(
      config,
      JSON.stringify({
        http: { host: '127.0.0.1', port: 0, token: 'names-test-token' },
        watchers: [{ dir: inbox, table: 'Order Items', database: tmp.path('serve.hyper'), checkpointDelayMs: 50 }],
      }),
    );
    const serve = cli(['serve', '--config', config, '--log-format', 'json']);
    let stderr = '';
    serve.child.stderr!.on('data', (d: string) => (stderr += d));
    try {
      const lines = () => jsonLogLines(stderr);
      await waitFor(() => lines().some((l) => l.message === 'serving'), 'serve to start', 60000);
      const api = lines().find((l) => l.message === 'listening')!.url!;
      const post = await fetch(`${api}/watchers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer names-test-token' },
        body: JSON.stringify({ dir: added, table: 'Ünïcode Täble', database: tmp.path('serve2.hyper') }),
      });
      assert.equal(post.status, 201, await post.text());
      await dropFile(inbox, 'x.csv', csv('id', [[1], [2], [3]]));
      await dropFile(added, 'y.csv', csv('id', [[4]]));
      const stats = async () =>
        (JSON.parse(await (await fetch(`${api}/watchers`)).text()) as { watchers: { table: string; stats: { filesIngested: number } }[] })
          .watchers;
      await waitFor(async () => (await stats()).every((w) => w.stats.filesIngested === 1), 'both files to land', 30000);
      assert.deepEqual((await stats()).map((w) => w.table).sort(), ['Order Items', 'Ünïcode Täble']);
      const metrics = await (await fetch(`${api}/metrics`)).text();
      assert.match(metrics, /hyperwatch_rows_ingested_total\{[^}]*table="Order Items"[^}]*\} 3/);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.done;
    }
    const rows = await cli(['query', '--database', tmp.path('serve.hyper'), '--json', 'SELECT COUNT(*) AS n FROM "Order Items"']).done;
    assert.deepEqual(JSON.parse(rows.stdout), [{ n: '3' }]);
    const other = await cli(['query', '--database', tmp.path('serve2.hyper'), '--json', 'SELECT COUNT(*) AS n FROM "Ünïcode Täble"']).done;
    assert.deepEqual(JSON.parse(other.stdout), [{ n: '1' }]);
  });
});
