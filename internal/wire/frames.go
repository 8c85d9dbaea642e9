package wire

import (
	"errors"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
)

// The frames of package messages and the stream events of package paddock
// describe the same thing; these are the only conversions between them.
// Neither direction goes through a Failure message: an error event's kind
// and detail are read off the error itself.

// OutputFrame is the frame of an output event (stdout, stderr, or a
// watch's file change) at seq.
func OutputFrame(ref string, seq uint64, ev paddock.Event) messages.Frame {
	switch ev.Kind {
	case paddock.EventStderr:
		return &messages.Stderr{Ref: ref, Seq: seq, Data: ev.Data}
	case paddock.EventFile:
		return &messages.FileChange{Ref: ref, Seq: seq, Change: string(ev.File.Change), Path: ev.File.Path}
	}
	return &messages.Stdout{Ref: ref, Seq: seq, Data: ev.Data}
}

// ExitFrame is the terminal frame of an exit event, after outputs output
// frames.
func ExitFrame(ref string, seq, outputs uint64, code int) *messages.Exit {
	return &messages.Exit{Ref: ref, Seq: seq, Code: int32(code), OutputFrames: outputs}
}

// ErrorFrame is a terminal Error frame, after outputs output frames.
func ErrorFrame(ref string, seq, outputs uint64, reason, detail string, kind messages.ErrorKind) *messages.Error {
	return &messages.Error{Ref: ref, Seq: seq, Reason: reason, Detail: detail, Kind: kind, OutputFrames: outputs}
}

// ErrorFrameFields derives an Error frame's reason and kind from an error
// event's error: the reason is the error's detail token where it has one
// (closed_before_exit, start_timeout, ...), else its kind; an error outside
// the taxonomy has reason "error" and keeps the code FailureOf gives it
// (FrameError reads such a frame as unavailable: the command's fate is
// unknown).
func ErrorFrameFields(err error) (reason string, kind messages.ErrorKind) {
	k := paddock.KindOf(err)
	if k == "" {
		kind = messages.ErrorKind_ERROR_KIND_OTHER
		if errors.Is(err, paddock.ErrNoPublicURL) {
			kind = messages.ErrorKind_ERROR_KIND_NO_PUBLIC_URL
		}
		return "error", kind
	}
	if reason = detailOf(err); reason == "" {
		reason = string(k)
	}
	return reason, KindCode(k)
}

// detailOf is the detail token of a taxonomy error, or "".
func detailOf(err error) string {
	var (
		execTimeout *paddock.ExecTimeoutError
		unavailable *paddock.UnavailableError
		denied      *paddock.DeniedError
		invalid     *paddock.InvalidError
		restore     *paddock.RestoreFailedError
		write       *paddock.WriteFailedError
		provider    *paddock.ProviderError
	)
	switch {
	case errors.As(err, &execTimeout):
		return paddock.DetailExecTimeout
	case errors.As(err, &unavailable):
		return unavailable.Detail
	case errors.As(err, &denied):
		return denied.Detail
	case errors.As(err, &invalid):
		return invalid.Detail
	case errors.As(err, &restore):
		return restore.Detail
	case errors.As(err, &write):
		return write.Detail
	case errors.As(err, &provider):
		return provider.Detail
	}
	return ""
}

// EventOf is the stream event a frame stands for.
func EventOf(f messages.Frame) paddock.Event {
	switch f := f.(type) {
	case *messages.Stdout:
		return paddock.Stdout(f.GetData())
	case *messages.Stderr:
		return paddock.Stderr(f.GetData())
	case *messages.FileChange:
		return paddock.Event{Kind: paddock.EventFile, File: paddock.FileEvent{Change: paddock.FileChange(f.GetChange()), Path: f.GetPath()}}
	case *messages.Exit:
		return paddock.Exit(int(f.GetCode()))
	case *messages.Error:
		return paddock.Failed(FrameError(f))
	}
	return paddock.Failed(&paddock.UnavailableError{Detail: "unknown frame"})
}

// FrameError is the error an Error frame stands for: a taxonomy error of
// the frame's kind whose detail is the frame's reason (closed_before_exit
// reads as ErrClosedBeforeExit). A frame of no taxonomy kind is
// unavailable: its fate is unknown.
func FrameError(f *messages.Error) error {
	kind := f.GetKind()
	if KindFromCode(kind) == "" {
		kind = messages.ErrorKind_ERROR_KIND_UNAVAILABLE
	}
	return bareErrorOf(&messages.Failure{Kind: kind, Detail: f.GetReason()})
}
