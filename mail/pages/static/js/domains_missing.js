// The not-found page of the domain and address screens has nothing to drive.
