import type { WorkflowAttributes } from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';

/**
 * The parts of the submission statement that write workflows' attributes (R55): the jsonb
 * column of each workflow, and one row per attribute in causeway_workflow_attributes (its
 * term, the workflow's created_at and id). A batch where no workflow has attributes sends the
 * statement without them, so the common submit pays nothing.
 */
export function attributeInsertParts(
  workflows: readonly { readonly attributes?: WorkflowAttributes | null }[],
): {
  /** After the workflow insert's column list. */
  readonly column: RawBuilder<unknown>;
  /** After its values (rows read by `v.position`). */
  readonly value: RawBuilder<unknown>;
  /** After its `returning id`. */
  readonly returning: RawBuilder<unknown>;
  /** A CTE after the workflow insert, ending with a comma. */
  readonly insert: RawBuilder<unknown>;
} {
  if (!workflows.some((row) => row.attributes !== undefined && row.attributes !== null)) {
    return { column: sql``, value: sql``, returning: sql``, insert: sql`` };
  }
  // One JSON array, read back by position, as the inputs are.
  const json = `[${workflows.map((row) => JSON.stringify(row.attributes ?? null)).join(',')}]`;
  return {
    column: sql`, attributes`,
    value: sql`, nullif((${json}::jsonb)->(v.position::integer - 1), 'null'::jsonb)`,
    returning: sql`, attributes, created_at`,
    insert: sql`attribute_insert as (
      insert into causeway_workflow_attributes (term, created_at, workflow_id)
      select causeway_attribute_term(a.key, a.value), w.created_at, w.id
      from workflow_insert as w, jsonb_each(w.attributes) as a
      where w.attributes is not null
      returning 1
    ),`,
  };
}
