#!/usr/bin/env node
/** Entry point of the `hyperwatch` command (package.json `bin`). */
import process from 'node:process';
import { main } from './cli/main.ts';

process.exitCode = await main(process.argv.slice(2));
