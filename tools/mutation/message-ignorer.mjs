// A Stryker ignorer that leaves the text of error messages unmutated.
//
// The contract lets messages differ (only values, codes, abort points and ordering must equal Node's), so a mutant
// that changes a message's text is equivalent by contract: it survives unless a test pins the wording, and every
// survivor costs a run of all its covering tests. A "message" here is a string or template literal, or a `+`
// concatenation of them, that is:
// - an argument of `new SomethingError(…)` or of a call to a function whose name ends in `Error` (`lostError(…)`;
//   not a converter or predicate, `toFileError(…)`, `isCodedError(…)`), unless it reads like a code (`"timeout"`,
//   `"spawn_error"`, `"ENOENT"`: no space, only letters, digits, `_`);
// - the value of a `message` property in an object literal, or the initial value of a variable named `message` or
//   `…_MESSAGE` / `…Message`.
// Codes, op names and every other string stay mutated.
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin";

const REASON = "an error message's text (messages may differ by contract)";
const CODE = /^[A-Za-z0-9_]*$/;

/** The callee's name of a `new X(…)` or `f(…)` / `o.f(…)` node, if it has one. */
function calleeName(call) {
  const callee = call.callee;
  if (callee.type === "Identifier") return callee.name;
  if (callee.type === "MemberExpression" && callee.property.type === "Identifier") return callee.property.name;
  return undefined;
}

function isCodeLike(node) {
  return node.type === "StringLiteral" && CODE.test(node.value);
}

/** Whether the node (a literal, or a `+` chain holding one) is in a message position. */
function inMessagePosition(path) {
  let current = path;
  // Climb through concatenations: `"Invalid timeout: " + value`.
  while (current.parentPath?.node.type === "BinaryExpression" && current.parentPath.node.operator === "+") {
    current = current.parentPath;
  }
  const parent = current.parentPath?.node;
  if (!parent) return false;
  if (parent.type === "VariableDeclarator" && parent.init === current.node) {
    return parent.id.type === "Identifier" && /message$/i.test(parent.id.name);
  }
  if (parent.type === "ObjectProperty" && parent.value === current.node) {
    const key = parent.key;
    return (
      (key.type === "Identifier" && key.name === "message") || (key.type === "StringLiteral" && key.value === "message")
    );
  }
  if (
    (parent.type === "NewExpression" || parent.type === "CallExpression") &&
    parent.arguments.includes(current.node)
  ) {
    const name = calleeName(parent) ?? "";
    // Converters (`toFileError(thrown, fallbackPath)`) and predicates take other values than messages.
    return name.endsWith("Error") && !/^(to|is)[A-Z]/.test(name) && !isCodeLike(current.node);
  }
  return false;
}

export const messageIgnorer = {
  shouldIgnore(path) {
    const type = path.node.type;
    const concatenation = type === "BinaryExpression" && path.node.operator === "+";
    if (type !== "StringLiteral" && type !== "TemplateLiteral" && !concatenation) return undefined;
    return inMessagePosition(path) ? REASON : undefined;
  },
};

export const strykerPlugins = [declareValuePlugin(PluginKind.Ignore, "error-messages", messageIgnorer)];
