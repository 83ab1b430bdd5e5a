/**
 * What a Hyper database can do: its SQL types by file-format version, and whether hyperd reads
 * the claimed files itself (always for the embedded one; an endpoint is told, or probed once).
 */
import postgres from 'postgres';
import { standardSqlType } from '../../../src/columns/sql.ts';
import type { DbCapabilities, LogicalType, Logger } from '../../../src/types.ts';
import { decideReadsFiles, type EndpointReadsFiles } from './probe.ts';
import type { ConnectOptionsFor, HyperServer } from './server.ts';

/** Logical type → SQL on a Hyper database of the given file-format version. */
export function hyperSqlType(type: LogicalType, version: number): string {
  if (type.kind === 'real' && version < 4) return 'DOUBLE PRECISION';
  if (type.kind === 'decimal' && type.precision > 18 && version < 3) return 'TEXT';
  return standardSqlType(type);
}

export interface ReadsFilesSetting {
  readonly endpointReadsFiles?: EndpointReadsFiles | undefined;
  readonly sharedFilesystem?: boolean | undefined;
  /** The folder the endpoint must read files from, for the `auto` probe. */
  readonly probeDir?: string | undefined;
}

export interface HyperCapabilities {
  readonly capabilities: DbCapabilities;
  /** Endpoint, `auto`: asks hyperd once whether it can read the probe folder (again after a failure). */
  probe(): Promise<void>;
}

export function hyperCapabilities(
  server: HyperServer,
  setting: ReadsFilesSetting,
  database: string,
  connect: ConnectOptionsFor,
  logger: Logger,
): HyperCapabilities {
  const { fixed } = server;
  const mode: EndpointReadsFiles = setting.endpointReadsFiles ?? (setting.sharedFilesystem === true ? 'yes' : 'auto');
  // An endpoint in `auto` mode streams until the probe (first openPool) says it can read the files.
  let readsFiles = fixed ? mode === 'yes' : true;
  let probed: Promise<void> | undefined;
  return {
    capabilities: {
      get readsLocalFiles() {
        return readsFiles;
      },
      arrowStream: true,
      parquet: true,
      // hyperd writes a database to its file only when it unloads it (no connection left): a
      // committed transaction is lost if hyperd dies before that. See `checkpoint`.
      durableCommit: false,
      // A rolled-back transaction keeps its CREATE TABLE and ADD COLUMN.
      ddlSurvivesRollback: true,
      // What one large COPY loaded reads back in part in its own transaction (see DbCapabilities).
      partialReadBack: true,
    },
    probe() {
      probed ??=
        fixed && mode === 'auto'
          ? decideReadsFiles(() => postgres(connect(database, 1)), setting.probeDir, `hyperd at ${fixed.host}:${fixed.port}`, logger).then(
              (reads) => void (readsFiles = reads),
              (error: unknown) => {
                probed = undefined;
                throw error;
              },
            )
          : Promise.resolve();
      return probed;
    },
  };
}
