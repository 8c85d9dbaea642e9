package stubproc

import (
	"os"
	"syscall"
	"time"
)

// Times are info's access and status-change times, as stat(2) gives them;
// ok is false when info carries no stat record.
func Times(info os.FileInfo) (atime, ctime time.Time, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(st.Atim.Sec, st.Atim.Nsec), time.Unix(st.Ctim.Sec, st.Ctim.Nsec), true
}
