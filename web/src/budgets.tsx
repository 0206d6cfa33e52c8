// Spend budgets set on one key or one user (PATCH /v1/keys/{id}, /admin/v1/keys/{id},
// /admin/v1/users/{user}): shown as two lines, changed in a modal dialog. Amounts are the API's
// exact decimal strings; an empty field sends null (no cap of its own, or the plan's again).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { decimalText, usd } from './format.ts';
import { Alert, errorText } from './ui.tsx';

export type BudgetField = 'daily_budget_usd' | 'monthly_budget_usd';
export type OwnBudgets = Record<BudgetField, string | null>;
export type BudgetChange = Partial<OwnBudgets>;

const FIELDS: { field: BudgetField; label: 'Daily' | 'Monthly'; short: 'daily' | 'monthly' }[] = [
  { field: 'daily_budget_usd', label: 'Daily', short: 'daily' },
  { field: 'monthly_budget_usd', label: 'Monthly', short: 'monthly' },
];

/**
 * A key's or user's own budgets, one line each ("Daily: $0.0001", "Monthly: none"). `unset` says
 * what holds where there is none of its own ("none", "plan’s, $5.00").
 */
export function BudgetLines({ id, own, unset }: { id: string; own: OwnBudgets; unset: (field: BudgetField) => ComponentChildren }) {
  return (
    <ul class="plain budget-lines" id={id}>
      {FIELDS.map(({ field, label, short }) => (
        <li id={`${id}-${short}`}>
          {label}: {own[field] === null ? <span class="muted">{unset(field)}</span> : <strong>{usd(own[field])}</strong>}
        </li>
      ))}
    </ul>
  );
}

/** What the person typed, as the API takes it: "$5" is "5"; empty is "". */
const typed = (v: string) => v.trim().replace(/^\$\s*/, '');

/**
 * A button that opens a form for the two budgets in a modal dialog (focus stays inside, Escape
 * cancels). Only the fields that changed are sent; the API's 400 for an amount is shown under its
 * field, any other error under the form. `onSaved` runs after the change (e.g. to reload the list).
 */
export function BudgetEditor({
  id,
  label = 'Edit',
  ariaLabel,
  title,
  intro,
  own,
  hints,
  fieldLabel,
  save,
  onSaved,
}: {
  id: string;
  label?: string;
  ariaLabel: string;
  title: string;
  intro?: ComponentChildren;
  own: OwnBudgets;
  hints: Record<BudgetField, string>;
  fieldLabel: (period: 'Daily' | 'Monthly') => string;
  save: (change: BudgetChange) => Promise<void>;
  onSaved: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const shown = (v: string | null) => (v === null ? '' : decimalText(v));
  const [values, setValues] = useState<Record<BudgetField, string>>({ daily_budget_usd: '', monthly_budget_usd: '' });
  const [errors, setErrors] = useState<Partial<Record<BudgetField | 'other', string>>>({});
  const [busy, setBusy] = useState(false);
  const inputId = (field: BudgetField) => `${id}-${field === 'daily_budget_usd' ? 'daily' : 'monthly'}`;
  // The field the API refused gets the focus (its message is read with it).
  useEffect(() => {
    const bad = FIELDS.find((f) => errors[f.field]);
    if (bad) document.getElementById(inputId(bad.field))?.focus();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [errors]);
  const open = () => {
    setValues({ daily_budget_usd: shown(own.daily_budget_usd), monthly_budget_usd: shown(own.monthly_budget_usd) });
    setErrors({});
    dialog.current?.showModal();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const change: BudgetChange = {};
    for (const { field } of FIELDS) {
      const v = typed(values[field]);
      if (v !== shown(own[field])) change[field] = v === '' ? null : v;
    }
    if (Object.keys(change).length === 0) {
      dialog.current?.close();
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      await save(change);
      dialog.current?.close();
      onSaved();
    } catch (err) {
      const param = err instanceof ApiError ? err.param : null;
      setErrors(param === 'daily_budget_usd' || param === 'monthly_budget_usd' ? { [param]: errorText(err) } : { other: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  const titleId = `${id}-title`;
  return (
    <>
      <button type="button" class="secondary small" aria-label={ariaLabel} onClick={open}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} class="budget-dialog">
        <h2 id={titleId}>{title}</h2>
        {intro && <div class="dialog-intro">{intro}</div>}
        <form onSubmit={(e) => void submit(e)} noValidate>
          {FIELDS.map(({ field, label: period }) => {
            const fid = inputId(field);
            const error = errors[field];
            return (
              <div class="field">
                <label for={fid}>{fieldLabel(period)}</label>
                <div class="money-input">
                  <span aria-hidden="true">$</span>
                  <input
                    id={fid}
                    name={field}
                    inputMode="decimal"
                    autoComplete="off"
                    spellcheck={false}
                    placeholder="none"
                    value={values[field]}
                    aria-invalid={error ? 'true' : undefined}
                    aria-describedby={`${fid}-hint${error ? ` ${fid}-error` : ''}`}
                    onInput={(ev) => setValues({ ...values, [field]: (ev.target as HTMLInputElement).value })}
                  />
                </div>
                {error && (
                  <small id={`${fid}-error`} class="field-error">
                    {error}
                  </small>
                )}
                <small id={`${fid}-hint`} class="hint">
                  {hints[field]}
                </small>
              </div>
            );
          })}
          {errors.other && <Alert>{errors.other}</Alert>}
          <div class="dialog-actions">
            <button type="button" class="secondary" onClick={() => dialog.current?.close()} disabled={busy}>
              Cancel
            </button>
            <button type="submit" disabled={busy} id={`${id}-save`}>
              {busy ? 'Saving…' : 'Save'}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
