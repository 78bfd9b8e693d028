// Redaction of tokens in anything written to the log: the one implementation is in core, shared
// with the server's log.
export { REDACTED, redact } from '../../core/redact';
