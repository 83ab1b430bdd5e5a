/** The plugin contract kit (`hyperwatch/testing`), run on our own plugins and the README's example. */
import { psvIngester } from '../../../examples/psv-plugin.ts';
import { testIngester } from '../../../src/testing.ts';
import { builtinContracts } from '../../helpers/contract-samples.ts';

for (const contract of builtinContracts()) testIngester(contract);

testIngester({
  ingester: psvIngester,
  good: [{ name: 'people.psv', content: 'id|name\n1|ann\n2|bob\n', rows: 2 }],
  bad: [{ name: 'noheader.psv', content: 'no newline here' }],
});
