/**
 * R55 on the command line, as a child process against a server in another process:
 * `causeway submit --attr` (repeatable, typed from its text), `causeway workflows --attr`
 * (every one must match; `5` is a number, `"5"` a string), `causeway status` showing them, and
 * bad ones refused (usage, or the server's BAD_USER_INPUT) with exit 2.
 */
import { describe, expect, it } from 'vitest';
import { causeway, causewayJson, useCli } from './helpers';

const { url, asAlice } = useCli();

interface SubmitJson {
  submitWorkflow: { workflow: { id: string } };
}
interface ListJson {
  workflows: { edges: { node: { id: string } }[] };
}
interface StatusJson {
  workflow: { id: string; attributes: Record<string, unknown> };
}

async function submitWith(label: string, attrs: readonly string[]): Promise<string> {
  const run = await causewayJson<SubmitJson>([
    'submit',
    'cli-stranded',
    '--input',
    JSON.stringify({ label }),
    ...attrs.flatMap((attr) => ['--attr', attr]),
    ...asAlice(),
  ]);
  expect(run.code, run.stderr).toBe(0);
  return run.json.submitWorkflow.workflow.id;
}

async function listed(attrs: readonly string[]): Promise<string[]> {
  const run = await causewayJson<ListJson>([
    'workflows',
    ...attrs.flatMap((attr) => ['--attr', attr]),
    '--url',
    url(),
  ]);
  expect(run.code, run.stderr).toBe(0);
  return run.json.workflows.edges.map((edge) => edge.node.id);
}

describe('causeway and attributes', () => {
  it('submits with --attr, lists by every --attr given with types read from the text, shows them in status', async () => {
    const numbered = await submitWith('attr-a', ['tenant=acme', 'tier=5', 'vip=true']);
    const texted = await submitWith('attr-b', ['tenant=acme', 'tier="5"']);
    const spaced = await submitWith('attr-c', ['tenant=acme corp', 'ratio=-2.5']);

    expect(await listed(['tenant=acme'])).toEqual([texted, numbered]);
    expect(await listed(['tenant=acme', 'tier=5'])).toEqual([numbered]);
    expect(await listed(['tier="5"'])).toEqual([texted]);
    expect(await listed(['tier=5', 'vip=true'])).toEqual([numbered]);
    expect(await listed(['vip="true"'])).toEqual([]);
    expect(await listed(['tenant=acme corp', 'ratio=-2.5'])).toEqual([spaced]);

    const status = await causewayJson<StatusJson>(['status', numbered, '--url', url()]);
    expect(status.json.workflow.attributes).toEqual({ tenant: 'acme', tier: 5, vip: true });
    const text = await causeway(['status', texted, '--url', url()]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^attributes:\s+tenant=acme {2}tier="5"$/m);

    const help = await causeway(['workflows', '--help']);
    expect(help.stdout).toMatch(
      /--attr <key=value>\s+only workflows with this attribute.*\(repeatable\)/,
    );
  }, 120_000);

  it('refuses an --attr that is not key=value, and one the server refuses, with exit 2', async () => {
    const usage = await causeway(['workflows', '--attr', 'tenant', '--url', url()]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--attr must be key=value, got "tenant"/);
    const twice = await causeway(['workflows', '--attr', 'a=1', '--attr', 'a=2', '--url', url()]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/--attr gives a twice/);
    const bad = await causewayJson<{ error: { code: string } }>([
      'workflows',
      '--attr',
      '9lives=1',
      '--url',
      url(),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.json.error.code).toBe('BAD_USER_INPUT');
    const badSubmit = await causeway([
      'submit',
      'cli-stranded',
      '--input',
      '{"label":"attr-bad"}',
      '--attr',
      `note=${'x'.repeat(257)}`,
      ...asAlice(),
    ]);
    expect(badSubmit.code).toBe(2);
    expect(badSubmit.stderr).toMatch(/over the limit of 256/);
  }, 60_000);
});
