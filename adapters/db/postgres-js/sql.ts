/**
 * The postgres.js handles the pool and its connections work with: an instance, or one of its
 * transactions.
 */
import type postgres from 'postgres';

export type Sql = postgres.Sql<Record<string, never>>;
type TransactionSql = postgres.TransactionSql<Record<string, never>>;
export type AnySql = Sql | TransactionSql;
