package main

import "strconv"

// maxCSIParam is the largest number a control sequence's parameter keeps
// on its way to the emulator. No position, size, mode or colour needs
// more; a repeat count does (CSI n b repeats the last character n times),
// and "repeat it 2,147,483,647 times" would keep the emulator busy for
// minutes on a dozen bytes.
const maxCSIParam = 9999

// paramClamp lowers the numeric parameters of control sequences (CSI: ESC
// [, or the one byte 0x9b outside a UTF-8 character) to maxCSIParam as
// output passes, across writes; everything else passes unchanged.
type paramClamp struct {
	inCSI    bool
	afterESC bool
	utf8Left int // continuation bytes the current UTF-8 character still has
	digits   bool
	value    int // the current parameter's value so far, at most maxCSIParam+1
}

// filter appends p to dst, its parameters lowered.
func (c *paramClamp) filter(dst, p []byte) []byte {
	for _, b := range p {
		if !c.inCSI {
			dst = append(dst, b)
			switch {
			case c.afterESC:
				c.afterESC = false
				c.inCSI = b == '['
			case b == 0x1b:
				c.afterESC, c.utf8Left = true, 0
			case c.utf8Left > 0 && b >= 0x80 && b <= 0xbf:
				c.utf8Left--
			case b == 0x9b: // a C1 CSI, not part of a character
				c.inCSI, c.utf8Left = true, 0
			case b >= 0xc2 && b <= 0xdf:
				c.utf8Left = 1
			case b >= 0xe0 && b <= 0xef:
				c.utf8Left = 2
			case b >= 0xf0 && b <= 0xf4:
				c.utf8Left = 3
			default:
				c.utf8Left = 0
			}
			continue
		}
		if b >= '0' && b <= '9' {
			c.digits = true
			c.value = min(c.value*10+int(b-'0'), maxCSIParam+1)
			continue
		}
		if c.digits {
			dst = strconv.AppendInt(dst, int64(min(c.value, maxCSIParam)), 10)
			c.digits, c.value = false, 0
		}
		dst = append(dst, b)
		switch {
		case b >= 0x40 && b <= 0x7e, b == 0x18, b == 0x1a: // the final byte, or CAN/SUB ending the sequence
			c.inCSI = false
		case b == 0x1b: // a new sequence begins
			c.inCSI, c.afterESC = false, true
		}
	}
	return dst
}
