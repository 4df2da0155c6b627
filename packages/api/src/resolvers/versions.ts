import type { DefinitionVersionView } from '@causeway/engine';
import { definitionAt, everyVersion, workflowVersion } from '@causeway/workflow/internal';
import { type FieldNode, type GraphQLResolveInfo, Kind } from 'graphql';
import type { ApiContext } from '../context';
import type { ApiResolvers, Models } from '../models';

/**
 * The fields of a definition that need the database (R54): the versions other engines or
 * stored work know, and each one's status, in-flight count and workers. A query asking only
 * for the step graph (the dashboard's workflow page) reads nothing.
 */
const storedFields = new Set(['status', 'inFlight', 'workers']);

/**
 * `Query.definitions`: every version, with its step graph where this process defines it. The
 * stored facts are read on the primary (`engine.versions()`), as the registry's liveness is.
 */
export const versionQueryFields: Pick<ApiResolvers['Query'], 'definitions'> = {
  definitions: async (_root, _args, context, info) =>
    needsStoredFacts(info)
      ? (await context.services.engine.versions()).map((view) => versionModel(context, view))
      : definedVersions(context),
};

/** The model of one listed version, with its definition where this process has one. */
function versionModel(
  context: ApiContext,
  view: DefinitionVersionView,
): Models['WorkflowDefinition'] {
  const definition = definitionAt(context.services.definitions, view.name, view.version);
  return {
    ...view,
    defined: definition !== undefined,
    deadlineMs: definition?.deadlineMs ?? null,
    steps: definition?.steps ?? [],
  };
}

/** The versions this process defines, as code says them, without reading the database. */
function definedVersions(context: ApiContext): Models['WorkflowDefinition'][] {
  const { definitions } = context.services;
  return everyVersion(definitions).map((definition) => {
    const latest = definitions.get(definition.name) === definition;
    return {
      name: definition.name,
      version: workflowVersion(definition),
      defined: true,
      latest,
      // Not read: the selection asked for none of the stored fields.
      status: latest ? 'serving' : 'draining',
      inFlight: 0,
      workers: [],
      deadlineMs: definition.deadlineMs,
      steps: definition.steps,
    };
  });
}

/** Whether the selection asks for a stored field (any fragment counts as asking). */
function needsStoredFacts(info: GraphQLResolveInfo): boolean {
  return info.fieldNodes.some((node: FieldNode) =>
    (node.selectionSet?.selections ?? []).some(
      (selection) => selection.kind !== Kind.FIELD || storedFields.has(selection.name.value),
    ),
  );
}
