package endpoint

// FlightWaiters returns how many runs of s wait now for a flight that
// another run computes, so that a test can start a flight's computation
// once every run it means to join has joined.
func FlightWaiters(s *Service) int {
	return s.runFlights.g.WaitingAll()
}
