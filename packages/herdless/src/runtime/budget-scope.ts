import type { RetryBudget } from '../core/budget/budget.js';
import type { RetryContext, RetryOperation } from './retry-types.js';

/**
 * One budgeted layer's attempt, while its operation is being called. A retry budget counts each
 * logical call once, however many herdless layers it crosses: when a call with a budget starts
 * inside the operation of an enclosing layer's attempt with the same budget (a `createRetry`
 * wrapping a `withRetry`, both given one budget), the inner call takes over the accounting of that
 * attempt — it does not count its own first send (the enclosing layer counted it) but counts its
 * retries and outcomes — and the enclosing layer, seeing `delegated`, does not count that attempt's
 * outcome again. Found through the synchronous part of the operation call (how nested layers start),
 * so it needs no async context and works the same in browsers.
 * @internal
 */
export interface BudgetScope {
  readonly budget: RetryBudget;
  readonly parent: BudgetScope | undefined;
  delegated: boolean;
}

/** The budgeted attempt whose operation is being called right now, if any. */
let enclosingScope: BudgetScope | undefined;

/**
 * @internal True when an enclosing layer's attempt with this budget is running: that layer then
 * leaves the attempt's accounting to this call. Called synchronously when a call starts.
 */
export function claimNested(budget: RetryBudget | undefined): boolean {
  // Stryker disable next-line ConditionalExpression,BooleanLiteral: scopes exist only for budgets, so the loop finds none for undefined; and a call without a budget never reads the answer.
  if (budget === undefined) return false;
  for (let scope = enclosingScope; scope !== undefined; scope = scope.parent) {
    if (scope.budget === budget) {
      scope.delegated = true;
      return true;
    }
  }
  return false;
}

/** @internal A scope for one attempt of a call with `budget` (none without a budget). */
export function newScope(budget: RetryBudget | undefined): BudgetScope | undefined {
  // Stryker disable next-line ConditionalExpression: a scope with no budget matches no nested call's budget and is read only by calls with one: an object more, nothing else.
  return budget === undefined ? undefined : { budget, parent: enclosingScope, delegated: false };
}

/** @internal Calls the operation with `scope` as the enclosing budgeted attempt (undefined: no budget, no scope). */
export function callOperation<T>(operation: RetryOperation<T>, context: RetryContext, scope: BudgetScope | undefined): T | PromiseLike<T> {
  if (scope === undefined) return operation(context);
  enclosingScope = scope;
  try {
    return operation(context);
  } finally {
    enclosingScope = scope.parent;
  }
}

/** @internal A budget that hears nothing but retry requests: for an attempt whose outcome a nested layer already reported. */
export function retriesOnly(budget: RetryBudget): RetryBudget {
  return { name: budget.name, onAttempt: noop, onSuccess: noop, onFailure: noop, allowRetry: (now) => budget.allowRetry(now) };
}

function noop(): void {}
