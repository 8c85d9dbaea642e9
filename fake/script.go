package fake

import (
	"strconv"
	"strings"

	"github.com/paddockhq/paddock"
)

// op is one instruction of a fake command script (docs/contract.md#fake).
type op int

const (
	opOut  op = iota + 1 // out:<data> emits stdout
	opErr                // err:<data> emits stderr
	opExit               // exit:<n> exits with n
	opStay               // stay echoes stdin as echo:<data> until EOF, then exits 0
	opDrop               // drop ends with closed_before_exit: the transport vanished
)

// instr is one parsed instruction.
type instr struct {
	op   op
	data []byte // opOut, opErr
	code int    // opExit
}

// parseScript reads a command's arguments as instructions; the command name
// is ignored. An unknown instruction is an *InvalidError naming it.
func parseScript(cmd paddock.Cmd) ([]instr, error) {
	if err := cmd.Validate(); err != nil {
		return nil, err
	}
	script := make([]instr, 0, len(cmd.Args))
	for _, arg := range cmd.Args {
		in, err := parseInstr(arg)
		if err != nil {
			return nil, err
		}
		script = append(script, in)
	}
	return script, nil
}

func parseInstr(arg string) (instr, error) {
	switch {
	case strings.HasPrefix(arg, "out:"):
		return instr{op: opOut, data: []byte(arg[len("out:"):])}, nil
	case strings.HasPrefix(arg, "err:"):
		return instr{op: opErr, data: []byte(arg[len("err:"):])}, nil
	case strings.HasPrefix(arg, "exit:"):
		code, err := strconv.Atoi(arg[len("exit:"):])
		if err != nil {
			return instr{}, &paddock.InvalidError{Detail: paddock.DetailCommand + ": exit code is not a decimal integer: " + strconv.Quote(arg)}
		}
		return instr{op: opExit, code: code}, nil
	case arg == "stay":
		return instr{op: opStay}, nil
	case arg == "drop":
		return instr{op: opDrop}, nil
	}
	return instr{}, &paddock.InvalidError{Detail: paddock.DetailCommand + ": unknown fake instruction " + strconv.Quote(arg)}
}

// evaluate computes what Exec answers for a script without running anything
// (docs/contract.md#fake): output into out, nothing after a terminal
// instruction (as a spawned command would behave); stay is ignored; drop
// is closed_before_exit with no output.
func evaluate(script []instr, out *paddock.ExecOutput) (paddock.ExecResult, error) {
	for _, in := range script {
		var err error
		switch in.op {
		case opOut:
			err = out.Add(paddock.EventStdout, in.data)
		case opErr:
			err = out.Add(paddock.EventStderr, in.data)
		case opExit:
			return out.Result(in.code), nil
		case opDrop:
			return paddock.ExecResult{}, paddock.ErrClosedBeforeExit
		}
		if err != nil {
			return paddock.ExecResult{}, err
		}
	}
	return out.Result(0), nil
}
