// Public surface of the API client. The extension imports from here only.
export * from './types';
export { createClient, filenameFromDisposition, LONG_POLL_MARGIN_MS, MAX_INJECT_FIELD_CHARS, MAX_RETRIES, MAX_TIMEOUT_MS, type ClientOptions } from './client';
export { API_ERROR_CODES, ApiError, parseRetryAfter, redact, type ApiErrorCode, type ApiErrorOptions } from './errors';
export {
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_USER_AGENT,
  DOWNLOAD_TIMEOUT_MS,
  MAX_DOWNLOAD_BYTES,
  MAX_JSON_BYTES,
  MAX_RETRY_AFTER_MS,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  type LogFn,
} from './http';
export { MAX_LIST_LIMIT, MAX_LIST_WAIT_SECONDS, paths } from './paths';
export { MAX_SSE_EVENT_CHARS, MAX_SSE_LINE_CHARS, SseParser, SseProtocolError, type SseEvent, type SseProtocolErrorCode } from './sse';
export { STREAM_IDLE_TIMEOUT_MS, STREAM_MAX_RETRY_AFTER_MS, STREAM_RECONNECT_INITIAL_MS, STREAM_RECONNECT_MAX_MS, STREAM_STABLE_MS, type StreamOptions } from './stream';
export {
  parseAttachments,
  parseDeleteResult,
  parseDomains,
  parseHealth,
  parseInjectionResult,
  parseLatestCode,
  parseLatestLink,
  parseLinks,
  parseListing,
  parseMessage,
  parseStreamEvent,
  parseWebhookDeliveryResult,
} from './validate';
export { MAX_WEBHOOK_TOKEN_LENGTH, redactWebhookUrl, webhookUrls, type WebhookUrlOptions } from './webhooks';
