package actors

// Operations maps the full name of each declared request message to its
// operation's name, for the test that checks the declarations against the
// messages protocol.
func Operations() map[string]string {
	out := make(map[string]string, len(operations))
	for _, o := range operations {
		out[o.requestName()] = o.name()
	}
	return out
}
