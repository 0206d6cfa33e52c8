// Building blocks shared by the pages: loading and error states, confirmation dialogs, copy
// buttons, meters and tables that become cards on a phone.
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { decimalText, usd } from './format.ts';

/** Loads `fn` (again when `deps` change); `reload` fetches afresh. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const reload = useCallback(() => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => n === seq.current && setState({ data, loading: false }),
      (err: Error) => n === seq.current && setState({ error: err.message, loading: false }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

/**
 * A user action that calls the API: `busy` while it runs, its error's message in `error`.
 * `run` resolves true when the action succeeded.
 */
export function useAction(fn: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (err) {
      setError(errorText(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(null) };
}

export function Page({ title, intro, children, actions }: { title: string; intro?: ComponentChildren; children: ComponentChildren; actions?: ComponentChildren }) {
  const h1 = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Model Gateway`;
    // After a navigation, focus goes to the new page's heading (screen readers announce it).
    if (document.activeElement && document.activeElement !== document.body) h1.current?.focus();
  }, [title]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={h1}>
          {title}
        </h1>
        {actions && <div class="page-actions">{actions}</div>}
      </div>
      {intro && <p class="intro">{intro}</p>}
      {children}
    </>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function Alert({ kind = 'error', children }: { kind?: 'error' | 'success' | 'info'; children: ComponentChildren }) {
  return (
    <div class={`alert ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** Loading, error or the content. */
export function Loaded<T>({ state, what, children }: { state: { data?: T; error?: string; loading: boolean }; what: string; children: (data: T) => ComponentChildren }) {
  if (state.error && state.data === undefined) return <Alert>Could not load {what}: {state.error}</Alert>;
  if (state.data === undefined) return <Loading what={what} />;
  return <>{children(state.data)}</>;
}

export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}

/**
 * A button that asks first, in a modal dialog (native <dialog>: focus stays inside, Escape
 * cancels). `onConfirm` may throw: its message is shown in the dialog.
 */
export function ConfirmButton({
  label,
  title,
  body,
  confirm,
  onConfirm,
  danger = true,
  disabled,
  small = true,
  ariaLabel,
}: {
  label: string;
  title: string;
  body: ComponentChildren;
  confirm: string;
  onConfirm: () => Promise<void>;
  danger?: boolean;
  disabled?: boolean;
  small?: boolean;
  ariaLabel?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const { busy, error, run, clear } = useAction(onConfirm);
  const go = async () => {
    if (await run()) dialog.current?.close();
  };
  return (
    <>
      <button type="button" class={`${danger ? 'danger' : 'secondary'}${small ? ' small' : ''}`} disabled={disabled} aria-label={ariaLabel} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={`${title}-title`.replace(/\W+/g, '-')} onClose={clear}>
        <h2 id={`${title}-title`.replace(/\W+/g, '-')}>{title}</h2>
        <div>{body}</div>
        {error && <Alert>{error}</Alert>}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={() => dialog.current?.close()} disabled={busy}>
            Cancel
          </button>
          <button type="button" class={danger ? 'danger' : ''} onClick={() => void go()} disabled={busy}>
            {busy ? 'Working…' : confirm}
          </button>
        </div>
      </dialog>
    </>
  );
}

export function CopyButton({ text, label = 'Copy', ariaLabel }: { text: string; label?: string; ariaLabel?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without clipboard permission (plain HTTP on another host): select the text for the user.
      const range = document.createRange();
      const node = document.querySelector(`[data-copy="${CSS.escape(text)}"]`);
      if (node) {
        range.selectNodeContents(node);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <button type="button" class="secondary small" onClick={() => void copy()} aria-label={ariaLabel}>
      {copied ? 'Copied' : label}
      <span class="visually-hidden" aria-live="polite">
        {copied ? ' — copied to the clipboard' : ''}
      </span>
    </button>
  );
}

/** A secret or snippet with its copy button. */
export function Secret({ text, id }: { text: string; id?: string }) {
  return (
    <div class="secret">
      <code id={id} data-copy={text}>
        {text}
      </code>
      <CopyButton text={text} />
    </div>
  );
}

/**
 * A command to copy. Its lines are never broken (a broken URL or key reads as two words): a line
 * wider than the page scrolls sideways, and the block is focusable so the keyboard can scroll it.
 */
export function Snippet({ text, label }: { text: string; label: string }) {
  return (
    <div class="snippet">
      <pre tabIndex={0} role="region" aria-label={label}>
        <code data-copy={text}>{text}</code>
      </pre>
      <CopyButton text={text} ariaLabel={`Copy: ${label}`} />
    </div>
  );
}

/** A model id, broken across lines only after a `/`, never inside a name (at its hyphens or dots). */
export function ModelId({ id }: { id: string }) {
  // Each part ends with its '/' (no lookbehind: Safari before 16.4 cannot parse one).
  const parts = id.replace(/\//g, '/\u0000').split('\u0000').filter(Boolean);
  return (
    <code class="model-id">
      {parts.map((p, i) => (
        <>
          {i > 0 && <wbr />}
          <span>{p}</span>
        </>
      ))}
    </code>
  );
}

/** `shown`: the figures as text when they are not counts (amounts of money, from the API's decimals). */
export function Meter({ label, used, limit, detail, shown, id }: { label: string; used: number; limit: number; detail?: ComponentChildren; shown?: { used: string; limit: string }; id?: string }) {
  const share = limit > 0 ? Math.min(1, used / limit) : 0;
  const level = share >= 0.9 ? 'high' : share >= 0.7 ? 'mid' : 'low';
  return (
    <div class="meter" id={id}>
      <div class="meter-label">
        <span>{label}</span>
        <span class="nowrap">
          <strong>{shown?.used ?? used.toLocaleString('en-US')}</strong> / {shown?.limit ?? limit.toLocaleString('en-US')}
        </span>
      </div>
      <div
        class={`meter-bar ${level}`}
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={Math.min(used, limit)}
        aria-valuetext={shown ? `${shown.used} of ${shown.limit}` : undefined}
      >
        <div style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </div>
      {detail && <div class="meter-detail">{detail}</div>}
    </div>
  );
}

/**
 * A table whose rows become labelled cards below 640 px (each cell repeats its column name), so
 * nothing is cut off on a phone.
 */
export function Table({ columns, caption, children, numeric = [] }: { columns: string[]; caption: string; children: ComponentChildren; numeric?: string[] }) {
  return (
    <table class="responsive" data-columns={columns.join('|')}>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" class={numeric.includes(c) ? 'num' : undefined}>
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

export function Cell({ label, children, class: cls }: { label: string; children?: ComponentChildren; class?: string }) {
  // One wrapper: on a phone the cell is a two-column grid (its label, then its content).
  return (
    <td data-label={label} class={cls}>
      <div>{children}</div>
    </td>
  );
}

/**
 * A right-aligned amount of US dollars (the API's decimal string), labelled for the phone layout;
 * null is "—" (no known price). `unpriced`: requests of the row whose cost is unknown (not in it),
 * noted as "2 unpriced" (short, for narrow columns: `UnpricedNote` under the table says what it means).
 */
export function UsdCell({ label, value, unpriced = 0 }: { label: string; value: string | null; unpriced?: number }) {
  return (
    <td data-label={label} class="num" title={value === null ? 'No known price' : `$${decimalText(value)}`}>
      <div>
        {value === null ? (
          <>
            <span aria-hidden="true">—</span>
            <span class="visually-hidden">no known price</span>
          </>
        ) : (
          usd(value)
        )}
        {unpriced > 0 && (
          <small class="cell-note" title={`${unpriced.toLocaleString('en-US')} request${unpriced === 1 ? '' : 's'} without a known price: not in the cost`}>
            {unpriced.toLocaleString('en-US')} unpriced
          </small>
        )}
      </div>
    </td>
  );
}

/** Under a table with costs: what "—" and "unpriced" mean. */
export function UnpricedNote() {
  return <p class="note">— : no known price. Unpriced: requests without a known price, not in the cost.</p>;
}

/** A usage row's requests, errors, billed tokens and cost: the same four cells in every usage table. */
export function CountedCells({ row }: { row: { requests: number; errors: number; billed_tokens: number; cost: string | null; unpriced_requests: number } }) {
  return (
    <>
      <NumCell label="Requests" value={row.requests} />
      <NumCell label="Errors" value={row.errors} />
      <NumCell label="Billed tokens" value={row.billed_tokens} />
      <UsdCell label="Cost" value={row.cost} unpriced={row.unpriced_requests} />
    </>
  );
}

/** A right-aligned count, labelled for the phone layout. */
export function NumCell({ label, value, unit }: { label: string; value: number | null; unit?: string }) {
  return (
    <td data-label={label} class="num">
      {value === null ? 'unknown' : `${value.toLocaleString('en-US')}${unit ? ` ${unit}` : ''}`}
    </td>
  );
}

/** A search box that applies its text on submit. */
export function SearchForm({ id, label, button, onSearch }: { id: string; label: string; button: string; onSearch: (text: string) => void }) {
  const [text, setText] = useState('');
  return (
    <form
      class="inline-form"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(text.trim());
      }}
    >
      <Field id={id} label={label}>
        <input id={id} type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      </Field>
      <button type="submit">{button}</button>
    </form>
  );
}

export function Badge({ kind = 'neutral', children }: { kind?: 'ok' | 'warn' | 'bad' | 'neutral' | 'info'; children: ComponentChildren }) {
  return <span class={`badge ${kind}`}>{children}</span>;
}

export function errorText(err: unknown): string {
  return err instanceof ApiError ? err.message : (err as Error).message;
}

export function Field({ id, label, hint, children }: { id: string; label: string; hint?: string; children: JSX.Element }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}
