// The drop-in APIs of the catchers and the hosted service a suite already calls (Mailpit v1,
// MailHog v2, Inbucket v1, Mailosaur), the CONNECT proxy and its local CA: off unless asked for
// (`serve --compat`, docs/compat.md).

/** What `--compat` turns on; absent from the server's options: none of it. */
export interface CompatOptions {
  /**
   * `--compat-open`: the token-free APIs answer without a token on any address (a container).
   * Without it they need no token only while the server listens on loopback alone; on any other
   * address they take HTTP Basic auth with the API token as the password.
   */
  open: boolean;
}
