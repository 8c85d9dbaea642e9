// Package wire converts the contract's Go values to and from the messages
// that carry them between actors and machines. Private state never
// crosses: a handle arrives rebuilt from provider, name and instance id,
// which every adapter accepts. Errors keep their kind, detail, typed data
// and operation, so errors.Is and errors.As answer the same on both sides.
package wire

import (
	"errors"
	"io/fs"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// kind is a taxonomy kind's wire code and the sentinel it decodes to when
// it carries no data.
type kind struct {
	code     messages.ErrorKind
	sentinel error
}

// kinds maps each taxonomy kind to its wire form.
var kinds = map[paddock.Kind]kind{
	paddock.KindNotFound:      {messages.ErrorKind_ERROR_KIND_NOT_FOUND, paddock.ErrNotFound},
	paddock.KindTruncated:     {messages.ErrorKind_ERROR_KIND_TRUNCATED, paddock.ErrTruncated},
	paddock.KindNotSupported:  {messages.ErrorKind_ERROR_KIND_NOT_SUPPORTED, paddock.ErrNotSupported},
	paddock.KindAlreadyExists: {messages.ErrorKind_ERROR_KIND_ALREADY_EXISTS, paddock.ErrAlreadyExists},
	paddock.KindCommandExited: {messages.ErrorKind_ERROR_KIND_COMMAND_EXITED, paddock.ErrCommandExited},
	paddock.KindRateLimited:   {messages.ErrorKind_ERROR_KIND_RATE_LIMITED, paddock.ErrRateLimited},
	paddock.KindUnavailable:   {messages.ErrorKind_ERROR_KIND_UNAVAILABLE, paddock.ErrUnavailable},
	paddock.KindDenied:        {messages.ErrorKind_ERROR_KIND_DENIED, paddock.ErrDenied},
	paddock.KindInvalid:       {messages.ErrorKind_ERROR_KIND_INVALID, paddock.ErrInvalid},
	paddock.KindRestoreFailed: {messages.ErrorKind_ERROR_KIND_RESTORE_FAILED, paddock.ErrRestoreFailed},
	paddock.KindWriteFailed:   {messages.ErrorKind_ERROR_KIND_WRITE_FAILED, paddock.ErrWriteFailed},
	paddock.KindProvider:      {messages.ErrorKind_ERROR_KIND_PROVIDER, paddock.ErrProvider},
}

// KindCode returns the wire code of k (ERROR_KIND_OTHER for an unknown kind).
func KindCode(k paddock.Kind) messages.ErrorKind {
	if w, ok := kinds[k]; ok {
		return w.code
	}
	return messages.ErrorKind_ERROR_KIND_OTHER
}

// KindFromCode returns the taxonomy kind of a wire code, or "" for the codes
// outside the taxonomy.
func KindFromCode(c messages.ErrorKind) paddock.Kind {
	for k, w := range kinds {
		if w.code == c {
			return k
		}
	}
	return ""
}

// FailureOf encodes err for a reply; nil stays nil. The kind, detail and
// typed data survive; an *OpError's op, provider and name survive; the text
// of an error outside the taxonomy survives as text.
func FailureOf(err error) *messages.Failure {
	if err == nil {
		return nil
	}
	f := &messages.Failure{}
	var op *paddock.OpError
	if errors.As(err, &op) {
		f.Op, f.OpProvider, f.Name = op.Op, string(op.Provider), op.Name
	}
	var (
		execTimeout *paddock.ExecTimeoutError
		rateLimited *paddock.RateLimitedError
		unavailable *paddock.UnavailableError
		denied      *paddock.DeniedError
		invalid     *paddock.InvalidError
		restore     *paddock.RestoreFailedError
		write       *paddock.WriteFailedError
		provider    *paddock.ProviderError
		unknown     *paddock.UnknownProviderError
	)
	switch {
	case errors.As(err, &execTimeout):
		f.Kind, f.Detail = messages.ErrorKind_ERROR_KIND_UNAVAILABLE, paddock.DetailExecTimeout
		f.ExecTimeout = durationpb.New(execTimeout.Timeout)
	case errors.As(err, &rateLimited):
		f.Kind = messages.ErrorKind_ERROR_KIND_RATE_LIMITED
		if rateLimited.RetryAfter != nil {
			f.RetryAfter = durationpb.New(*rateLimited.RetryAfter)
		}
	case errors.As(err, &unavailable):
		f.Kind, f.Detail, f.Status = messages.ErrorKind_ERROR_KIND_UNAVAILABLE, unavailable.Detail, int32(unavailable.Status)
	case errors.As(err, &denied):
		f.Kind, f.Detail, f.Status = messages.ErrorKind_ERROR_KIND_DENIED, denied.Detail, int32(denied.Status)
	case errors.As(err, &invalid):
		f.Kind, f.Detail, f.Status = messages.ErrorKind_ERROR_KIND_INVALID, invalid.Detail, int32(invalid.Status)
	case errors.As(err, &restore):
		f.Kind, f.Detail = messages.ErrorKind_ERROR_KIND_RESTORE_FAILED, restore.Detail
	case errors.As(err, &write):
		f.Kind, f.Detail = messages.ErrorKind_ERROR_KIND_WRITE_FAILED, write.Detail
	case errors.As(err, &provider):
		f.Kind, f.Detail, f.Provider = messages.ErrorKind_ERROR_KIND_PROVIDER, provider.Detail, string(provider.Provider)
	case errors.As(err, &unknown):
		f.Kind, f.Provider = messages.ErrorKind_ERROR_KIND_UNKNOWN_PROVIDER, string(unknown.Provider)
		for _, p := range unknown.Configured {
			f.Configured = append(f.Configured, string(p))
		}
	case paddock.KindOf(err) != "":
		f.Kind = KindCode(paddock.KindOf(err))
	case errors.Is(err, paddock.ErrNoPublicURL):
		f.Kind = messages.ErrorKind_ERROR_KIND_NO_PUBLIC_URL
	default:
		f.Kind, f.Message = messages.ErrorKind_ERROR_KIND_OTHER, err.Error()
	}
	return f
}

// ErrorOf decodes a reply's failure; nil (or an unspecified kind) is nil.
// The result matches the same errors.Is / errors.As targets as the error
// FailureOf encoded, wrapped in an *OpError when the failure names an op.
func ErrorOf(f *messages.Failure) error {
	if f == nil || f.Kind == messages.ErrorKind_ERROR_KIND_UNSPECIFIED {
		return nil
	}
	err := bareErrorOf(f)
	if f.Op != "" {
		return &paddock.OpError{Op: f.Op, Provider: paddock.Provider(f.OpProvider), Name: f.Name, Err: err}
	}
	return err
}

// bareErrorOf decodes a failure's error without its op wrapping. A failure
// of a taxonomy kind that carries no data decodes to that kind's sentinel.
func bareErrorOf(f *messages.Failure) error {
	status := int(f.Status)
	noData := f.Detail == "" && status == 0 && f.Provider == "" && f.RetryAfter == nil && f.ExecTimeout == nil
	if k := KindFromCode(f.Kind); k != "" && noData && k != paddock.KindRateLimited {
		return kinds[k].sentinel
	}
	switch f.Kind {
	case messages.ErrorKind_ERROR_KIND_UNAVAILABLE:
		if f.ExecTimeout != nil {
			return &paddock.ExecTimeoutError{Timeout: f.ExecTimeout.AsDuration()}
		}
		return &paddock.UnavailableError{Detail: f.Detail, Status: status}
	case messages.ErrorKind_ERROR_KIND_RATE_LIMITED:
		e := &paddock.RateLimitedError{}
		if f.RetryAfter != nil {
			d := f.RetryAfter.AsDuration()
			e.RetryAfter = &d
		}
		return e
	case messages.ErrorKind_ERROR_KIND_DENIED:
		return &paddock.DeniedError{Detail: f.Detail, Status: status}
	case messages.ErrorKind_ERROR_KIND_INVALID:
		return &paddock.InvalidError{Detail: f.Detail, Status: status}
	case messages.ErrorKind_ERROR_KIND_RESTORE_FAILED:
		return &paddock.RestoreFailedError{Detail: f.Detail}
	case messages.ErrorKind_ERROR_KIND_WRITE_FAILED:
		return &paddock.WriteFailedError{Detail: f.Detail}
	case messages.ErrorKind_ERROR_KIND_PROVIDER:
		return &paddock.ProviderError{Provider: paddock.Provider(f.Provider), Detail: f.Detail}
	case messages.ErrorKind_ERROR_KIND_NO_PUBLIC_URL:
		return paddock.ErrNoPublicURL
	case messages.ErrorKind_ERROR_KIND_UNKNOWN_PROVIDER:
		e := &paddock.UnknownProviderError{Provider: paddock.Provider(f.Provider)}
		for _, p := range f.Configured {
			e.Configured = append(e.Configured, paddock.Provider(p))
		}
		return e
	}
	if k := KindFromCode(f.Kind); k != "" {
		return kinds[k].sentinel
	}
	return errors.New(f.Message)
}

// All decodes every message of ms with decode, in order (never nil).
func All[M, T any](ms []M, decode func(M) T) []T {
	out := make([]T, len(ms))
	for i, m := range ms {
		out[i] = decode(m)
	}
	return out
}

// HandleMessage encodes h without its private state.
func HandleMessage(h paddock.Handle) *messages.Handle {
	return &messages.Handle{Provider: string(h.Provider), Name: h.Name, InstanceId: h.InstanceID}
}

// HandleFromMessage decodes a handle; its Private is nil.
func HandleFromMessage(m *messages.Handle) paddock.Handle {
	return paddock.Handle{Provider: paddock.Provider(m.GetProvider()), Name: m.GetName(), InstanceID: m.GetInstanceId()}
}

// CommandMessage encodes c without its private state.
func CommandMessage(c paddock.Subscription) *messages.CommandRef {
	return &messages.CommandRef{Provider: string(c.Provider), Ref: string(c.Ref)}
}

// CommandFromMessage decodes a command reference; its Private is nil.
func CommandFromMessage(m *messages.CommandRef) paddock.Subscription {
	return paddock.Subscription{Provider: paddock.Provider(m.GetProvider()), Ref: paddock.Ref(m.GetRef())}
}

// CmdMessage encodes a command line.
func CmdMessage(c paddock.Cmd) *messages.Cmd {
	m := &messages.Cmd{Path: c.Path, Args: c.Args, Dir: c.Dir}
	for _, e := range c.Env {
		m.Env = append(m.Env, &messages.EnvVar{Name: e.Name, Value: e.Value})
	}
	return m
}

// CmdFromMessage decodes a command line.
func CmdFromMessage(m *messages.Cmd) paddock.Cmd {
	c := paddock.Cmd{Path: m.GetPath(), Args: m.GetArgs(), Dir: m.GetDir()}
	for _, e := range m.GetEnv() {
		c.Env = append(c.Env, paddock.EnvVar{Name: e.GetName(), Value: e.GetValue()})
	}
	return c
}

// statusCodes maps each status to its wire code.
var statusCodes = map[paddock.Status]messages.Status{
	paddock.StatusRunning:   messages.Status_STATUS_RUNNING,
	paddock.StatusSuspended: messages.Status_STATUS_SUSPENDED,
	paddock.StatusUnknown:   messages.Status_STATUS_UNKNOWN,
}

// InfoMessage encodes an Info.
func InfoMessage(i paddock.Info) *messages.Info {
	code, ok := statusCodes[i.Status]
	if !ok {
		code = messages.Status_STATUS_UNKNOWN
	}
	return &messages.Info{Status: code, Raw: i.Raw, Name: i.Name, Id: i.ID, Image: i.Image, CreatedAt: timestampOf(i.CreatedAt)}
}

// InfoFromMessage decodes an Info; an unrecognised status is unknown.
func InfoFromMessage(m *messages.Info) paddock.Info {
	i := paddock.Info{Name: m.GetName(), ID: m.GetId(), Image: m.GetImage(), Status: paddock.StatusUnknown,
		CreatedAt: timeOf(m.GetCreatedAt()), Raw: m.GetRaw()}
	for s, code := range statusCodes {
		if code == m.GetStatus() {
			i.Status = s
		}
	}
	return i
}

// SessionMessage encodes a Session.
func SessionMessage(s paddock.Session) *messages.Session {
	return &messages.Session{
		Id: s.ID, Name: s.Name, Command: s.Command, Tty: s.TTY,
		CreatedAt: timestampOf(s.CreatedAt), LastActivityAt: timestampOf(s.LastActivityAt),
		State: string(s.State), ExitCode: exitCodeOf(s.ExitCode), Failure: s.Failure,
	}
}

// exitCodeOf is an optional exit code on the wire.
func exitCodeOf(code *int) *int32 {
	if code == nil {
		return nil
	}
	c := int32(*code)
	return &c
}

// SessionFromMessage decodes a Session.
func SessionFromMessage(m *messages.Session) paddock.Session {
	s := paddock.Session{
		ID: m.GetId(), Name: m.GetName(), Command: m.GetCommand(), TTY: m.GetTty(),
		CreatedAt: timeOf(m.GetCreatedAt()), LastActivityAt: timeOf(m.GetLastActivityAt()),
		State: paddock.SessionState(m.GetState()), Failure: m.GetFailure(),
	}
	if m.ExitCode != nil {
		code := int(m.GetExitCode())
		s.ExitCode = &code
	}
	return s
}

// CheckpointMessage encodes a Checkpoint.
func CheckpointMessage(c paddock.Checkpoint) *messages.Checkpoint {
	return &messages.Checkpoint{Id: c.ID, Comment: c.Comment, CreatedAt: timestampOf(c.CreatedAt), Memory: c.Memory, Size: c.Size}
}

// CheckpointFromMessage decodes a Checkpoint.
func CheckpointFromMessage(m *messages.Checkpoint) paddock.Checkpoint {
	return paddock.Checkpoint{ID: m.GetId(), Comment: m.GetComment(), CreatedAt: timeOf(m.GetCreatedAt()), Memory: m.GetMemory(), Size: m.GetSize()}
}

// PreviewMessage encodes a Preview, token included: it is for the caller
// who exposed the port and must not be logged.
func PreviewMessage(p paddock.Preview) *messages.Preview {
	return &messages.Preview{Url: p.URL, Port: int32(p.Port), Token: p.Token.Reveal(), ExpiresAt: timestampOf(p.ExpiresAt)}
}

// PreviewFromMessage decodes a Preview.
func PreviewFromMessage(m *messages.Preview) paddock.Preview {
	return paddock.Preview{URL: m.GetUrl(), Port: int(m.GetPort()), Token: paddock.NewSecret(m.GetToken()), ExpiresAt: timeOf(m.GetExpiresAt())}
}

// TermSizeMessage encodes a terminal size; nil stays nil.
func TermSizeMessage(s *paddock.TermSize) *messages.TermSize {
	if s == nil {
		return nil
	}
	return &messages.TermSize{Cols: uint32(max(s.Cols, 0)), Rows: uint32(max(s.Rows, 0))}
}

// TermSizeFromMessage decodes a terminal size; absent is nil.
func TermSizeFromMessage(m *messages.TermSize) *paddock.TermSize {
	if m == nil {
		return nil
	}
	return &paddock.TermSize{Cols: int(min(m.GetCols(), 1<<20)), Rows: int(min(m.GetRows(), 1<<20))}
}

// FileInfoMessage encodes a FileInfo.
func FileInfoMessage(fi paddock.FileInfo) *messages.FileInfo {
	return &messages.FileInfo{Name: fi.Name, Path: fi.Path, Type: string(fi.Type), Size: fi.Size,
		Mode: uint32(fi.Mode.Perm()), ModTime: timestampOf(fi.ModTime), Target: fi.Target}
}

// FileInfoFromMessage decodes a FileInfo.
func FileInfoFromMessage(m *messages.FileInfo) paddock.FileInfo {
	return paddock.FileInfo{Name: m.GetName(), Path: m.GetPath(), Type: paddock.FileType(m.GetType()), Size: m.GetSize(),
		Mode: fs.FileMode(m.GetMode()).Perm(), ModTime: timeOf(m.GetModTime()), Target: m.GetTarget()}
}

// ExecRequestMessage is an Exec request with its options.
func ExecRequestMessage(id string, h paddock.Handle, cmd paddock.Cmd, o paddock.ExecOpts) *messages.ExecRequest {
	return &messages.ExecRequest{Id: id, Handle: HandleMessage(h), Cmd: CmdMessage(cmd),
		Timeout: DurationMessage(o.Timeout), StderrToStdout: o.StderrToStdout, MaxOutput: o.MaxOutput}
}

// SpawnRequestMessage is a Spawn request with its options; the owner and
// window are the sender's to set.
func SpawnRequestMessage(h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) *messages.SpawnRequest {
	return &messages.SpawnRequest{Handle: HandleMessage(h), Cmd: CmdMessage(cmd), Stdin: o.Stdin, Tty: o.TTY,
		Detachable: o.Detachable, SessionName: o.Name, Size: TermSizeMessage(o.Size)}
}

// SpawnOptsFromMessage returns a Spawn request's options.
func SpawnOptsFromMessage(m *messages.SpawnRequest) paddock.SpawnOpts {
	return paddock.SpawnOpts{Stdin: m.GetStdin(), TTY: m.GetTty(), Detachable: m.GetDetachable(), Name: m.GetSessionName(),
		Size: TermSizeFromMessage(m.GetSize())}
}

// ExecOptsFromMessage returns an Exec request's options.
func ExecOptsFromMessage(m *messages.ExecRequest) paddock.ExecOpts {
	return paddock.ExecOpts{Timeout: DurationFromMessage(m.GetTimeout()), StderrToStdout: m.GetStderrToStdout(), MaxOutput: m.GetMaxOutput()}
}

// ExecReplyMessage is the reply carrying an Exec's result.
func ExecReplyMessage(id string, r paddock.ExecResult) *messages.ExecReply {
	return &messages.ExecReply{Id: id, Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: int32(r.ExitCode), Timeout: DurationMessage(r.Timeout)}
}

// ExecResultFromMessage returns the result an Exec reply carries.
func ExecResultFromMessage(m *messages.ExecReply) paddock.ExecResult {
	return paddock.ExecResult{Stdout: m.GetStdout(), Stderr: m.GetStderr(), ExitCode: int(m.GetExitCode()), Timeout: DurationFromMessage(m.GetTimeout())}
}

// TerminateModeMessage encodes a mode ("" stays unspecified, i.e. graceful).
func TerminateModeMessage(m paddock.TerminateMode) messages.TerminateMode {
	switch m {
	case paddock.TerminateGraceful:
		return messages.TerminateMode_TERMINATE_MODE_GRACEFUL
	case paddock.TerminateForce:
		return messages.TerminateMode_TERMINATE_MODE_FORCE
	}
	return messages.TerminateMode_TERMINATE_MODE_UNSPECIFIED
}

// TerminateModeFromMessage decodes a mode: unspecified is "" (graceful),
// and a value this side does not know stays unknown, so that validation
// refuses it rather than read it as graceful.
func TerminateModeFromMessage(m messages.TerminateMode) paddock.TerminateMode {
	switch m {
	case messages.TerminateMode_TERMINATE_MODE_UNSPECIFIED:
		return ""
	case messages.TerminateMode_TERMINATE_MODE_GRACEFUL:
		return paddock.TerminateGraceful
	case messages.TerminateMode_TERMINATE_MODE_FORCE:
		return paddock.TerminateForce
	}
	return paddock.TerminateMode("unknown:" + m.String())
}

// DurationMessage encodes an optional duration; nil stays absent.
func DurationMessage(d *time.Duration) *durationpb.Duration {
	if d == nil {
		return nil
	}
	return durationpb.New(*d)
}

// DurationFromMessage decodes an optional duration; absent is nil.
func DurationFromMessage(m *durationpb.Duration) *time.Duration {
	if m == nil {
		return nil
	}
	d := m.AsDuration()
	return &d
}

// FileModeFromMessage decodes permission bits.
func FileModeFromMessage(mode uint32) fs.FileMode { return fs.FileMode(mode) & fs.ModePerm }

// timestampOf encodes t; the zero time stays absent.
func timestampOf(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// timeOf decodes a timestamp; absent is the zero time.
func timeOf(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}
