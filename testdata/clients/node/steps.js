// The step protocol the Node.js sessions of the client suite share: each
// step prints "=== NAME" and runs on its own; an error prints "ERROR
// <SQLSTATE>" (compared) or "EXCEPTION <name>" for a client-side one, and
// "# <message>" (shown, not compared), then the session goes on.

function oneLine(s) { return String(s).replace(/\s+/g, ' '); }

// step runs body as the step name. opts.code gives an error's SQLSTATE
// (default: e.code); opts.recover runs after a failed step.
async function step(name, body, opts = {}) {
  console.log('=== ' + name);
  try {
    await body();
  } catch (e) {
    const code = opts.code ? opts.code(e) : e.code;
    console.log(code ? 'ERROR ' + code : 'EXCEPTION ' + (e.name || 'Error'));
    console.log('# ' + oneLine(e.message).slice(0, 300));
    if (opts.recover) await opts.recover();
  }
}

module.exports = { oneLine, step };
