/**
 * A parser of Prometheus' text exposition format (version 0.0.4), written from the format's
 * description rather than from prom-client: `# HELP`, `# TYPE`, and samples
 * `name{label="value",…} value` with `\\`, `\"` and `\n` escaped in label values. It refuses
 * what the format does not allow (a sample before its family's TYPE, a bad line), so a test
 * that parses a scrape also checks that the scrape is well-formed.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: string;
  readonly help: string;
}

export interface Scrape {
  readonly families: ReadonlyMap<string, Family>;
  readonly samples: readonly Sample[];
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function parsePrometheusText(text: string): Scrape {
  const help = new Map<string, string>();
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    const where = `line ${index + 1}: ${line}`;
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
      const rest = line.slice(7);
      const space = rest.indexOf(' ');
      const name = space === -1 ? rest : rest.slice(0, space);
      const value = space === -1 ? '' : rest.slice(space + 1);
      if (!metricName.test(name)) throw new Error(`bad metric name, ${where}`);
      (line.startsWith('# HELP ') ? help : types).set(name, value);
      continue;
    }
    if (line.startsWith('#') || line.trim() === '') continue;
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, types);
    if (family === undefined) throw new Error(`sample before its # TYPE, ${where}`);
    samples.push(sample);
  }
  const families = new Map<string, Family>();
  for (const [name, type] of types) {
    if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type)) {
      throw new Error(`unknown type ${type} of ${name}`);
    }
    families.set(name, { name, type, help: help.get(name) ?? '' });
  }
  return { families, samples };
}

/** The family a sample belongs to: its own name, or a histogram's without the suffix. */
function familyOf(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return types.get(base) === 'histogram' || types.get(base) === 'summary' ? base : undefined;
}

function parseSample(line: string, where: string): Sample {
  const brace = line.indexOf('{');
  const firstSpace = line.indexOf(' ');
  let name: string;
  const labels: Record<string, string> = {};
  let rest: string;
  if (brace !== -1 && (firstSpace === -1 || brace < firstSpace)) {
    name = line.slice(0, brace);
    let position = brace + 1;
    for (;;) {
      if (line[position] === '}') {
        position += 1;
        break;
      }
      const equals = line.indexOf('=', position);
      if (equals === -1 || line[equals + 1] !== '"') throw new Error(`bad label, ${where}`);
      const label = line.slice(position, equals);
      if (!labelName.test(label)) throw new Error(`bad label name ${label}, ${where}`);
      let value = '';
      position = equals + 2;
      for (;;) {
        const char = line[position];
        if (char === undefined) throw new Error(`unterminated label value, ${where}`);
        if (char === '"') break;
        if (char === '\\') {
          const escaped = line[position + 1];
          if (escaped === 'n') value += '\n';
          else if (escaped === '\\' || escaped === '"') value += escaped;
          else throw new Error(`bad escape, ${where}`);
          position += 2;
        } else {
          value += char;
          position += 1;
        }
      }
      if (label in labels) throw new Error(`label ${label} twice, ${where}`);
      labels[label] = value;
      position += 1;
      if (line[position] === ',') position += 1;
    }
    rest = line.slice(position);
  } else {
    name = line.slice(0, firstSpace);
    rest = line.slice(firstSpace);
  }
  if (!metricName.test(name)) throw new Error(`bad metric name, ${where}`);
  const fields = rest.trim().split(/\s+/);
  if (fields.length < 1 || fields.length > 2) throw new Error(`bad sample value, ${where}`);
  const value = parseValue(fields[0] as string, where);
  return { name, labels, value };
}

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`bad sample value ${text}, ${where}`);
  return value;
}

/** The samples of one name whose labels include `labels`. */
export function samplesOf(
  scrape: Scrape,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Sample[] {
  return scrape.samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The one sample of a name and labels (throws unless exactly one matches). */
export function sampleValue(
  scrape: Scrape,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  const found = samplesOf(scrape, name, labels);
  if (found.length !== 1) {
    throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  }
  return (found[0] as Sample).value;
}
