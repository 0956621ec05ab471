package stomp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"
)

// FuzzStompFrames feeds arbitrary bytes where the broker's STOMP frames are read (the frame
// reader the connection's read loop uses), and hands every ERROR frame to the classification
// of a refused CONNECT and of an ended subscription. Nothing may panic; a refusal's message
// comes from the frame; a classification is never nil.
func FuzzStompFrames(f *testing.F) {
	for _, s := range []string{
		"CONNECTED\nversion:1.2\nheart-beat:10000,10000\n\n\x00",
		"MESSAGE\ndestination:/amq/queue/q\nmessage-id:1\nsubscription:q\ncontent-length:5\n\n{\"a\"}\x00",
		"ERROR\nmessage:Access refused for user 'x'\ncontent-type:text/plain\n\nBad CONNECT\x00",
		"ERROR\nmessage:connection_forced\n\n\x00",
		"ERROR\nmessage:read timeout\n\n\x00",
		"\n\n\nRECEIPT\nreceipt-id:7\n\n\x00",
		"MESSAGE\ncontent-length:999999999\n\nshort\x00",
		"MESSAGE\nkey\\c:va\\nlue\n\n\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := frame.NewReader(io.LimitReader(bytes.NewReader(data), 1<<20))
		for range 64 {
			fr, err := rd.Read()
			if err != nil {
				return
			}
			if fr == nil { // a heart-beat
				continue
			}
			if fr.Command != frame.ERROR {
				continue
			}
			se := &stomp.Error{Message: fr.Header.Get(frame.Message), Frame: fr}
			refused := connectError(se)
			var ref *RefusedError
			if !errors.As(refused, &ref) || ref.Message != se.Message {
				t.Fatalf("CONNECT answered %v, classified %v", fr, refused)
			}
			if !strings.Contains(ref.Error(), "event broker refused") {
				t.Fatalf("refusal text %q", ref.Error())
			}
			if ended := streamError(*se); ended == nil || ended.Error() == "" {
				t.Fatalf("an ended subscription classified as %v", ended)
			}
		}
	})
}
