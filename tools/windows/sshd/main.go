//go:build windows

// Command sshd is the stand-in for Windows OpenSSH's sshd in the Windows SSH test of `make test-windows`: there is
// no Windows OpenSSH under Wine, so this small server (golang.org/x/crypto/ssh and github.com/pkg/sftp) runs inside
// the Wine prefix on 127.0.0.1 and does what Outpost's bootstrap relies on from Windows OpenSSH with its default
// shell:
//   - public-key authentication against one authorized key (any user name);
//   - an `exec` request runs its command line as `cmd.exe /c <command>` (the command line handed over verbatim, as
//     Windows OpenSSH does for cmd), in the account's profile directory, with USERPROFILE set to it and
//     SSH_CLIENT/SSH_CONNECTION set as sshd sets them; stdin, stdout, stderr and the exit status travel on the
//     channel, and the end of the channel's input closes the command's stdin;
//   - `subsystem sftp` serves the Windows file system (paths written `/C:/...`, as Windows OpenSSH's sftp-server
//     takes them), including the posix-rename@openssh.com extension.
//
// It does not model: password or keyboard-interactive authentication, PowerShell or another DefaultShell, ACLs or
// Windows accounts (every session runs as the server's own user), `env`/`pty`/`shell`/port-forwarding requests
// (refused), signals, or the way Windows OpenSSH puts a session's processes in a job object killed with the
// session. Test tooling only; never shipped.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

type config struct {
	listen      string
	hostKey     string
	authorized  string
	profile     string
	addressFile string
}

func main() {
	var c config
	flag.StringVar(&c.listen, "listen", "127.0.0.1:0", "address to listen on (loopback only)")
	flag.StringVar(&c.hostKey, "host-key", "", "the host's private key (OpenSSH PEM)")
	flag.StringVar(&c.authorized, "authorized-key", "", "the one public key allowed in (authorized_keys line)")
	flag.StringVar(&c.profile, "profile", "", "the account's profile directory (USERPROFILE, start directory)")
	flag.StringVar(&c.addressFile, "address-file", "", "where to write host:port once listening")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "sshd stand-in:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	server, err := serverConfig(c)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(c.listen)
	if err != nil || (host != "127.0.0.1" && host != "::1") {
		return fmt.Errorf("refusing to listen on %q: loopback only", c.listen)
	}
	listener, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer listener.Close()
	if err := os.WriteFile(c.addressFile, []byte(listener.Addr().String()), 0o600); err != nil {
		return fmt.Errorf("write the address file: %w", err)
	}
	// Runs until killed: the test stops the process (and the prefix's wineserver) when it is done.
	var sessions sync.WaitGroup
	defer sessions.Wait()
	for {
		conn, err := listener.Accept()
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			serveConnection(conn, server, c.profile)
		}()
	}
}

func serverConfig(c config) (*ssh.ServerConfig, error) {
	hostKeyPEM, err := os.ReadFile(c.hostKey)
	if err != nil {
		return nil, fmt.Errorf("read the host key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(hostKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("parse the host key: %w", err)
	}
	line, err := os.ReadFile(c.authorized)
	if err != nil {
		return nil, fmt.Errorf("read the authorized key: %w", err)
	}
	allowed, _, _, _, err := ssh.ParseAuthorizedKey(line)
	if err != nil {
		return nil, fmt.Errorf("parse the authorized key: %w", err)
	}
	server := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if string(key.Marshal()) == string(allowed.Marshal()) {
				return &ssh.Permissions{}, nil
			}
			return nil, errors.New("key not authorized")
		},
	}
	server.AddHostKey(signer)
	return server, nil
}

func serveConnection(conn net.Conn, server *ssh.ServerConfig, profile string) {
	defer conn.Close()
	sconn, channels, requests, err := ssh.NewServerConn(conn, server)
	if err != nil {
		return
	}
	defer sconn.Close()
	var sessions sync.WaitGroup
	defer sessions.Wait()
	go ssh.DiscardRequests(requests)
	for newChannel := range channels {
		if newChannel.ChannelType() != "session" {
			_ = newChannel.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		channel, channelRequests, err := newChannel.Accept()
		if err != nil {
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			serveSession(channel, channelRequests, sessionEnv(sconn, profile), profile)
		}()
	}
}

// sessionEnv is the server's environment with what sshd sets for a session.
func sessionEnv(sconn *ssh.ServerConn, profile string) []string {
	client, _, _ := net.SplitHostPort(sconn.RemoteAddr().String())
	clientPort := portOf(sconn.RemoteAddr())
	server, _, _ := net.SplitHostPort(sconn.LocalAddr().String())
	serverPort := portOf(sconn.LocalAddr())
	env := []string{}
	for _, entry := range os.Environ() {
		name, _, _ := strings.Cut(entry, "=")
		if !strings.EqualFold(name, "USERPROFILE") {
			env = append(env, entry)
		}
	}
	return append(env,
		"USERPROFILE="+profile,
		fmt.Sprintf("SSH_CLIENT=%s %s %s", client, clientPort, serverPort),
		fmt.Sprintf("SSH_CONNECTION=%s %s %s %s", client, clientPort, server, serverPort),
	)
}

func portOf(addr net.Addr) string {
	_, port, _ := net.SplitHostPort(addr.String())
	return port
}

type execRequest struct{ Command string }
type subsystemRequest struct{ Name string }

// serveSession answers the session's requests until one starts a command or the SFTP server, then runs that.
func serveSession(channel ssh.Channel, requests <-chan *ssh.Request, env []string, profile string) {
	defer channel.Close()
	for request := range requests {
		switch request.Type {
		case "exec":
			var payload execRequest
			if ssh.Unmarshal(request.Payload, &payload) != nil {
				_ = request.Reply(false, nil)
				continue
			}
			_ = request.Reply(true, nil)
			go ssh.DiscardRequests(requests)
			runCommand(channel, payload.Command, env, profile)
			return
		case "subsystem":
			var payload subsystemRequest
			if ssh.Unmarshal(request.Payload, &payload) != nil || payload.Name != "sftp" {
				_ = request.Reply(false, nil)
				continue
			}
			_ = request.Reply(true, nil)
			go ssh.DiscardRequests(requests)
			serveSftp(channel)
			return
		default:
			_ = request.Reply(false, nil)
		}
	}
}

// runCommand runs `cmd.exe /c <command>` with the command line verbatim (no Go quoting), as Windows OpenSSH does.
// The exit status is sent before the end of output and the channel's close.
func runCommand(channel ssh.Channel, command string, env []string, profile string) {
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = `C:\windows\system32\cmd.exe`
	}
	cmd := exec.Command(comspec)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: "cmd.exe /c " + command}
	cmd.Env = env
	cmd.Dir = profile
	stdin, err := cmd.StdinPipe()
	if err != nil {
		sendStatus(channel, 1)
		return
	}
	cmd.Stdout = channel
	cmd.Stderr = channel.Stderr()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(channel.Stderr(), "sshd stand-in: cannot start cmd.exe:", err)
		sendStatus(channel, 1)
		return
	}
	// The channel's end of input (or its close) is the command's end of input.
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(stdin, channel)
		_ = stdin.Close()
	}()
	err = cmd.Wait()
	status := uint32(0)
	if exitErr, ok := err.(*exec.ExitError); ok {
		status = uint32(exitErr.ExitCode())
	} else if err != nil {
		status = 1
	}
	// The status goes before the end of output: a client that has ended its input closes the channel as soon as
	// the output ends (ssh2 does, its stream being destroyed once both sides are done), and x/crypto/ssh then
	// answers that close and drops anything sent after. OpenSSH holds a session channel open until its command's
	// status is sent.
	sendStatus(channel, status)
	_ = channel.CloseWrite()
	// Unblocks the copy if the client never ends its input.
	_ = channel.Close()
	<-copied
}

func sendStatus(channel ssh.Channel, status uint32) {
	_, _ = channel.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
}

func serveSftp(channel ssh.Channel) {
	server, err := sftp.NewServer(channel)
	if err != nil {
		return
	}
	_ = server.Serve()
	_ = server.Close()
}
