/**
 * The contract case on hyperwatch's ledger (see db-contract.ts): rows written by INSERT (sent
 * with the COMMIT), by COPY and, where the database reads files itself, from a file written for
 * it, all found again by claim id and by checksum.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  committedChecksums,
  committedClaims,
  ensureLedger,
  type LedgerEntry,
  ledgerInsert,
  ledgerScratchPath,
  recordAllInLedger,
} from '../store/ledger.ts';
import { newClaimId } from '../protocol/names.ts';
import type { ContractCase } from '../testing.ts';
import type { DbAdapter, DbPool } from '../types.ts';

export function ledgerCase(p: () => DbPool, db: () => DbAdapter, nextTable: (label: string) => string): ContractCase {
  return {
    name: 'keeps the ledger: rows by INSERT (with the COMMIT) and by COPY, found again by claim id and checksum',
    async run() {
      await ensureLedger(p());
      await ensureLedger(p()); // idempotent: every watcher start runs it
      const target = nextTable('ledger');
      const entry = (i: number): LedgerEntry => ({
        claimId: newClaimId(),
        fileName: `f${i} "quoted" \\ back.csv`,
        fileSize: 10 + i,
        rows: i,
        targetTable: target,
        directory: '/in',
        checksum: `${i}`.repeat(64).slice(0, 64),
      });
      const few = [entry(1), entry(2)];
      const many = [3, 4, 5, 6, 7].map(entry);
      await p().transaction(async (conn) => recordAllInLedger(conn, many));
      await p().transaction(async () => few.length, { last: () => ledgerInsert(few) });
      // A database that reads files itself reads the rows from a file written for it, removed after.
      const read = [8, 9, 10, 12].map(entry);
      if (db().capabilities.readsLocalFiles) {
        const folder = await mkdtemp(join(tmpdir(), 'hyperwatch-ledger-'));
        try {
          const path = ledgerScratchPath(folder, 'contract');
          await p().transaction(async (conn) => recordAllInLedger(conn, read, path));
          assert.deepEqual(await readdir(folder), [], 'the file for the server is removed');
        } finally {
          await rm(folder, { recursive: true, force: true });
        }
      } else {
        await p().transaction(async (conn) => recordAllInLedger(conn, read));
      }
      const all = [...few, ...many, ...read];
      assert.deepEqual(
        [
          ...(await committedClaims(
            p(),
            all.map((e) => e.claimId),
          )),
        ].sort(),
        all.map((e) => e.claimId).sort(),
      );
      assert.equal((await committedClaims(p(), [newClaimId()])).size, 0);
      const sums = await committedChecksums(
        p(),
        target,
        all.map((e) => e.checksum!),
      );
      assert.deepEqual([...sums.values()].sort(), all.map((e) => e.fileName).sort());
    },
  };
}
