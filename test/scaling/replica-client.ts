/** A GraphQL answer with the headers that say where it read and what it wrote. */
export interface Answer<T> {
  readonly status: number;
  /** `causeway-read-from`: the server that answered a query. */
  readonly readFrom: string | null;
  /** `causeway-read-after`: a mutation's WAL position, to send back. */
  readonly readAfter: string | null;
  readonly body: {
    data?: T | null;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
    extensions?: Record<string, unknown>;
  };
}

/** One POST to the API, as a client that may carry an operator token and a read-after token. */
export async function ask<T = Record<string, unknown>>(
  url: string,
  query: string,
  options: {
    variables?: Record<string, unknown>;
    token?: string;
    readAfter?: string;
    extensions?: Record<string, unknown>;
  } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json',
  };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.readAfter !== undefined) headers['causeway-read-after'] = options.readAfter;
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      query,
      variables: options.variables,
      extensions: options.extensions,
    }),
  });
  return {
    status: response.status,
    readFrom: response.headers.get('causeway-read-from'),
    readAfter: response.headers.get('causeway-read-after'),
    body: (await response.json()) as Answer<T>['body'],
  };
}

export const workflowIdsQuery = '{ workflows(first: 100) { edges { node { id } } } }';

/** The ids a `workflowIdsQuery` answer lists. */
export function idsOf(answer: Answer<unknown>): string[] {
  const data = answer.body.data as { workflows: { edges: { node: { id: string } }[] } } | null;
  if (data === null || data === undefined) {
    throw new Error(`no data: ${JSON.stringify(answer.body.errors)}`);
  }
  return data.workflows.edges.map((edge) => edge.node.id);
}
