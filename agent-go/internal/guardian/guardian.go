// Package guardian keeps an agent's commands from surviving the agent's own SIGKILL.
//
// A killed process cannot clean up, so on Linux the agent runs as two processes: the guardian (the process
// the client started, which stays tiny) and the server (its child, which speaks the protocol on the inherited
// stdin and stdout). The guardian holds the write end of a pipe, the lifeline, whose read end the server
// watches:
//   - the guardian is killed (SIGKILL included): the server reads EOF on the lifeline and shuts down as it
//     does at the end of its input, killing every command and every orphan it adopted;
//   - the server is killed: the guardian, a child subreaper, inherits the server's commands and their
//     orphans, kills every descendant it has and exits with the server's status.
//
// Only when both die at once (a SIGKILL of both pids) can a command survive. Termination signals sent to the
// guardian are passed on to the server.
package guardian

// lifelineEnv marks the server started by a guardian; its value is the lifeline's descriptor number.
const lifelineEnv = "OUTPOST_LIFELINE_FD"
