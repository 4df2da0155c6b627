import { readFileSync } from 'node:fs';
import { type MetricDefinition, metricDefinitions } from '@causeway/api';
import { describe, expect, it } from 'vitest';
import { exampleScrape, renderMetricsDoc } from '../../scripts/metrics-doc';
import { parsePrometheusText } from '../api/prometheus-text';

const definitions: readonly MetricDefinition[] = Object.values(metricDefinitions);

describe('docs/metrics.md', () => {
  it('is exactly what the generator makes from the metric definitions (run `pnpm generate`)', () => {
    const committed = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderMetricsDoc());
  });

  it('documents every metric with its type and labels', () => {
    const doc = renderMetricsDoc();
    for (const definition of definitions) {
      expect(doc).toContain(`| \`${definition.name}\` | ${definition.type} |`);
    }
  });

  it('names metrics by Prometheus conventions', () => {
    for (const definition of definitions) {
      expect(definition.name).toMatch(/^causeway_[a-z_]+$/);
      expect(definition.name.endsWith('_total')).toBe(definition.type === 'counter');
      if (definition.type === 'histogram') expect(definition.name).toMatch(/_seconds$/);
      for (const label of definition.labels) expect(label).toMatch(/^[a-z]+$/);
      if (definition.buckets !== undefined) {
        expect([...definition.buckets].sort((a, b) => a - b)).toEqual(definition.buckets);
      }
    }
    expect(new Set(definitions.map((definition) => definition.name)).size).toBe(definitions.length);
  });

  it('shows an example scrape of defined metrics only, as /metrics describes them', () => {
    const example = parsePrometheusText(exampleScrape);
    expect(example.samples.length).toBeGreaterThan(10);
    for (const family of example.families.values()) {
      const definition = definitions.find((candidate) => candidate.name === family.name);
      expect(definition, family.name).toBeDefined();
      expect(family).toEqual({
        name: definition?.name,
        type: definition?.type,
        help: definition?.help,
      });
    }
    for (const sample of example.samples) {
      const family = sample.name.replace(/_(bucket|sum|count)$/, '');
      const definition = definitions.find(
        (candidate) => candidate.name === sample.name || candidate.name === family,
      );
      const labels = Object.keys(sample.labels).filter((label) => label !== 'le');
      expect(labels.sort(), sample.name).toEqual([...(definition?.labels ?? ['?'])].sort());
    }
  });
});
