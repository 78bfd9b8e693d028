// inertText: message-derived text shown where VS Code renders syntax carries no link, icon or
// autolink syntax, and reads the same once the inserted breaks are removed.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { INERT_BREAK, inertText } from '../../src/core/inert';

/** VS Code's notification link syntax: `[text](target)` with an http(s), command: or file: target. */
const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
/** Codicon syntax in labels and the status bar. */
const ICON = /\$\([a-z0-9-]+(?:~[a-z0-9-]+)?\)/i;

/** Strings built from the characters of the syntaxes, so the generator hits them often. */
const syntaxy = fc.string({ unit: fc.constantFrom('[', ']', '(', ')', '$', ':', '/', '<', '>', 'a', 'command', 'https', ' ', 'x.y', '\\', INERT_BREAK), maxLength: 40 });

describe('inertText', () => {
  it('breaks a command link, a reference link, an icon and an autolink', () => {
    const hostile = 'Invoice [Open](command:workbench.action.terminal.new) [x][1] $(alert) <https://evil.test>';
    const out = inertText(hostile);
    assert.doesNotMatch(out, NOTIFICATION_LINK);
    assert.doesNotMatch(out, ICON);
    assert.ok(!out.includes(']('));
    assert.ok(!out.includes(']['));
    assert.ok(!out.includes('://'));
    assert.equal(out.split(INERT_BREAK).join(''), hostile);
  });

  it('leaves text without syntax as it is', () => {
    assert.equal(inertText('Your code is 123456 (valid 10 min)'), 'Your code is 123456 (valid 10 min)');
  });

  it('property: no link or icon syntax survives, and nothing but breaks is added', () => {
    fc.assert(
      fc.property(fc.oneof(syntaxy, fc.string()), (s) => {
        const out = inertText(s);
        assert.doesNotMatch(out, NOTIFICATION_LINK);
        assert.doesNotMatch(out, ICON);
        for (const pair of ['](', '][', ']:', '$(', '://']) assert.ok(!out.includes(pair), `${JSON.stringify(out)} contains ${pair}`);
        assert.equal(out.split(INERT_BREAK).join(''), s.split(INERT_BREAK).join(''));
      }),
      { numRuns: 2000 },
    );
  });
});
