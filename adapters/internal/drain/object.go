package drain

import (
	"os"
)

// Object is an open file as the kernel knows it (a pipe, a terminal),
// whoever holds a descriptor of it.
type Object struct {
	Dev, Ino uint64
}

// ObjectOf is the object f is open on.
func ObjectOf(f *os.File) (Object, error) {
	info, err := f.Stat()
	if err != nil {
		return Object{}, err
	}
	return objectOfInfo(info)
}
