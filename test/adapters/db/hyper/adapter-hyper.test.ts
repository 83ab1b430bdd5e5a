import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Hyperd } from '../../../../adapters/db/hyper/hyperd.ts';
import { locateHyperd } from '../../../../adapters/db/hyper/locate.ts';
import { silentLogger } from '../../../../src/log.ts';
import { testDbAdapter } from '../../../../src/testing.ts';
import { useHyperFixture } from '../../../helpers/env.ts';

describe('hyper adapter', () => {
  const fx = useHyperFixture();

  it('creates the database and runs queries', async () => {
    const rows = await fx.pool.query<{ x: number }>('SELECT 1 + 1 AS x');
    assert.equal(Number(rows[0]!.x), 2);
  });
});

// What every adapter must do, on this one: transactions, COPY, describing tables, the ledger,
// quoting (the cases that were here, copyFrom and describeTable among them, are part of it).
testDbAdapter({ name: 'hyper (embedded hyperd)' });

describe('embedded hyperd', () => {
  it('removes the log directories of killed processes when it starts', async () => {
    const located = locateHyperd();
    assert.ok(located.ok, 'hyperd is installed');
    // Above the kernel's largest pid (2^22), so no process can have it.
    const stale = join(tmpdir(), 'hyperwatch-hyperd-4194305-test');
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, 'hyperd.log'), 'old');
    const hyperd = new Hyperd({ binary: located.path, logger: silentLogger });
    try {
      await hyperd.endpoint();
      assert.equal(existsSync(stale), false, 'the dead process’s log directory is gone');
      const args = readFileSync(`/proc/${hyperd.pid}/cmdline`, 'utf8').split('\0');
      const logDir = args.find((a) => a.startsWith('--log-dir='))!.slice('--log-dir='.length);
      assert.match(logDir, new RegExp(`hyperwatch-hyperd-${process.pid}-`), 'its own is named after this process');
    } finally {
      await hyperd.stop();
    }
  });
});
