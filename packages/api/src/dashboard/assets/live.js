// @ts-check
/**
 * The transition stream over SSE, read with fetch (so that a token can go in a header, which
 * EventSource cannot send). It starts after the id the page was rendered at and, when the
 * stream drops, resubscribes after the last id it saw: the server delivers what was missed
 * from the log, so nothing is lost or repeated. No polling: between reconnects it only waits.
 */

/**
 * @typedef {object} Transition
 * @property {string} id
 * @property {string} workflowId
 * @property {string | null} taskId
 * @property {string | null} step
 * @property {string | null} from
 * @property {string} to
 * @property {string} reason
 * @property {string} actor
 * @property {string} at
 */

/**
 * @typedef {object} FollowOptions
 * @property {string} endpoint
 * @property {string | null} workflowId
 * @property {string} after
 * @property {() => string | null} token
 * @property {(transition: Transition) => void} onTransition
 * @property {(text: string, failed: boolean) => void} onStatus
 */

const subscription = `subscription DashboardTransitions($workflowId: ID, $after: ID) {
  transitions(workflowId: $workflowId, after: $after) { id workflowId taskId step from to reason actor at }
}`;

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows the stream until the page goes away; `restart()` reconnects at once (a new token).
 * @param {FollowOptions} options
 */
export function follow(options) {
  let after = options.after;
  let controller = new AbortController();
  let retryMs = 500;

  /** @param {string} block one SSE event */
  const handleEvent = (block) => {
    const lines = block.split('\n');
    const type = lines
      .find((line) => line.startsWith('event:'))
      ?.slice(6)
      .trim();
    const data = lines
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .join('\n');
    if (type === 'complete') return 'complete';
    if (data === '') return 'ok';
    /** @type {{ data?: { transitions: Transition }, errors?: { message: string, extensions?: { code?: string } }[] }} */
    const payload = JSON.parse(data);
    const [error] = payload.errors ?? [];
    if (error !== undefined) {
      throw new Error(`${error.extensions?.code ?? 'ERROR'}: ${error.message}`);
    }
    const transition = payload.data?.transitions;
    if (transition !== undefined) {
      after = transition.id;
      options.onTransition(transition);
    }
    return 'ok';
  };

  /** @param {AbortSignal} signal */
  const once = async (signal) => {
    const token = options.token();
    /** @type {Record<string, string>} */
    const headers = { accept: 'text/event-stream', 'content-type': 'application/json' };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const response = await fetch(options.endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        query: subscription,
        variables: { workflowId: options.workflowId, after },
      }),
      signal,
    });
    if (!response.ok || response.body === null) {
      const text = await response.text();
      let message = `HTTP ${response.status}`;
      try {
        const error = JSON.parse(text).errors?.[0];
        if (error !== undefined) message = `${error.extensions?.code ?? 'ERROR'}: ${error.message}`;
      } catch {}
      throw new Error(message);
    }
    options.onStatus('Live: changes appear as they commit', false);
    retryMs = 500;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      buffer += chunk.value;
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (handleEvent(block) === 'complete') return;
      }
    }
  };

  let stopped = false;
  const run = async () => {
    while (!stopped) {
      const current = controller;
      try {
        await once(current.signal);
        if (!current.signal.aborted) options.onStatus('The stream ended; reconnecting…', false);
      } catch (error) {
        if (!current.signal.aborted) {
          const reason = error instanceof Error ? error.message : String(error);
          const seconds = Math.max(1, Math.round(retryMs / 1_000));
          options.onStatus(`Not live (${reason}); retrying in ${seconds} s`, true);
        }
      }
      // A restart aborted the stream: reconnect at once, with the new token.
      if (current.signal.aborted) continue;
      await pause(retryMs);
      retryMs = Math.min(retryMs * 2, 15_000);
    }
  };

  options.onStatus('Connecting…', false);
  void run();
  window.addEventListener(
    'pagehide',
    () => {
      stopped = true;
      controller.abort();
    },
    { once: true },
  );
  return {
    restart() {
      const previous = controller;
      controller = new AbortController();
      previous.abort();
    },
  };
}
