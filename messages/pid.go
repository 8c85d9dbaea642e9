package messages

import "github.com/anthdm/hollywood/actor"

// PidOf converts a hollywood PID; nil stays nil.
func PidOf(p *actor.PID) *Pid {
	if p == nil {
		return nil
	}
	return &Pid{Address: p.Address, Id: p.ID}
}

// ActorPID converts back to a hollywood PID; nil stays nil.
func (p *Pid) ActorPID() *actor.PID {
	if p == nil {
		return nil
	}
	return actor.NewPID(p.Address, p.Id)
}
