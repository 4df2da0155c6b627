/**
 * The editors' side of the demo: an approval is an event sent through the GraphQL API's
 * `sendEvent` mutation with an operator's token (R38), as an editorial tool would send it.
 */
export interface Approval {
  readonly noteId: string;
  readonly editor: string;
  readonly verdict: 'approved' | 'rejected';
}

export interface ApprovalAnswer {
  readonly eventId: string;
  readonly deduplicated: boolean;
  /** The approval steps it completed now: none when it came before its step waited. */
  readonly tasks: readonly { readonly id: string; readonly step: string; readonly state: string }[];
}

export async function sendApproval(
  api: { readonly url: string; readonly token: string },
  approval: Approval,
): Promise<ApprovalAnswer> {
  const response = await fetch(api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${api.token}` },
    body: JSON.stringify({
      query: `mutation Approve($key: String!, $payload: JSON!, $id: String!) {
        sendEvent(name: "note.approved", key: $key, payload: $payload, idempotencyKey: $id,
                  clientMutationId: $id) {
          eventId deduplicated tasks { id step state }
        }
      }`,
      variables: {
        key: approval.noteId,
        payload: { editor: approval.editor, verdict: approval.verdict },
        id: `approval:${approval.noteId}:${approval.editor}`,
      },
    }),
  });
  const body = (await response.json()) as {
    data?: { sendEvent: ApprovalAnswer };
    errors?: { message: string }[];
  };
  if (body.data?.sendEvent === undefined) {
    throw new Error(`sendEvent failed: ${body.errors?.map((error) => error.message).join('; ')}`);
  }
  return body.data.sendEvent;
}
