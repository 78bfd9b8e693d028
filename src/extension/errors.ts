// Maps every error a user can meet to a message that says what happened and the actions
// that fix it. Branches on typed `code`s only. No vscode import: the UI layer turns the
// actions into buttons and tree-node commands.
import { ApiError } from '../api/errors';
import { commandTitle } from './commandIds';
import { codedError, type CodedError } from '../core/errors';

export type ErrorAction = 'setApiToken' | 'setWebhookToken' | 'showLog' | 'retry' | 'changePort' | 'startLocalServer' | 'confirmServer' | 'switchServer';

/** Button labels, shared by notifications and error nodes. */
export const ACTION_TITLES: Record<ErrorAction, string> = {
  setApiToken: commandTitle('setApiToken'),
  setWebhookToken: commandTitle('setWebhookToken'),
  showLog: commandTitle('showLog'),
  retry: 'Retry',
  changePort: 'Change Port',
  startLocalServer: commandTitle('startLocalServer'),
  confirmServer: commandTitle('confirmServer'),
  switchServer: commandTitle('switchServer'),
};

/** Why the local server (connection/localServer.ts) could not be started or attached to. */
type LocalServerErrorCode = 'port_taken' | 'data_dir_in_use' | 'cli_missing' | 'start_failed' | 'start_timeout' | 'not_proven' | 'token_unknown';

export class LocalServerError extends codedError<LocalServerErrorCode>('LocalServerError') {
  constructor(
    code: LocalServerErrorCode,
    message: string,
    readonly port?: number,
  ) {
    super(code, message);
  }
}

interface UserFacingError {
  message: string;
  actions: ErrorAction[];
  /** Cancellation: say nothing. */
  silent: boolean;
}

/** A failure of the extension itself (bad input from a prompt or a command argument): its codes. */
export type ExtensionErrorCode = 'invalid_input' | 'no_server' | 'no_webhook_token' | 'no_message' | 'not_supported' | 'unconfirmed_server' | 'unreachable';
export const ExtensionError = codedError<ExtensionErrorCode>('ExtensionError');
export type ExtensionError = CodedError<ExtensionErrorCode>;

export function isCancellation(e: unknown): boolean {
  if (ApiError.is(e, 'cancelled')) return true;
  const name = (e as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'Canceled';
}

export function describeError(e: unknown): UserFacingError {
  if (isCancellation(e)) return { message: '', actions: [], silent: true };
  if (ApiError.is(e)) {
    const actions: ErrorAction[] = (() => {
      switch (e.code) {
        case 'unauthorized':
          return [e.field === 'webhookToken' ? 'setWebhookToken' : 'setApiToken', 'showLog'];
        case 'rate_limited':
        case 'timeout':
        case 'not_found':
          return ['retry'];
        case 'network':
        case 'server':
          return ['retry', 'showLog'];
        case 'protocol':
          return ['showLog'];
        case 'bad_request':
        case 'invalid_input':
        case 'cancelled':
          return [];
      }
    })();
    return { message: e.message, actions, silent: false };
  }
  if (LocalServerError.is(e)) {
    switch (e.code) {
      case 'port_taken':
        return { message: e.message, actions: ['changePort', 'showLog'], silent: false };
      case 'start_timeout':
      case 'start_failed':
      case 'data_dir_in_use':
        return { message: e.message, actions: ['retry', 'showLog'], silent: false };
      case 'cli_missing':
        return { message: e.message, actions: ['showLog'], silent: false };
      case 'not_proven':
        return { message: e.message, actions: ['changePort', 'retry', 'showLog'], silent: false };
      case 'token_unknown':
        // The local server's token comes from its data folder only: nothing to set here.
        return { message: e.message, actions: ['retry', 'showLog'], silent: false };
    }
  }
  if (ExtensionError.is(e, 'unreachable')) return { message: e.message, actions: ['retry', 'showLog', 'switchServer'], silent: false };
  if (ExtensionError.is(e, 'unconfirmed_server')) return { message: e.message, actions: ['confirmServer', 'showLog'], silent: false };
  if (ExtensionError.is(e, 'no_server')) return { message: e.message, actions: ['startLocalServer', 'showLog'], silent: false };
  if (ExtensionError.is(e)) return { message: e.message, actions: [], silent: false };
  const text = e instanceof Error ? e.message : String(e);
  return { message: `Unexpected error: ${text}`, actions: ['showLog'], silent: false };
}
