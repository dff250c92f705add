package e2e

import "os"

var interruptSignal = os.Interrupt
