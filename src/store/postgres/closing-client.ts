import pg from 'pg';

type ConnectCallback = (error: Error | null) => void;

/**
 * A node-postgres client that lets go of its socket when connecting fails. When the failure is the
 * client's own rather than the server's (the server asks for a SCRAM password and the URL gives
 * none: "client password must be a string"), node-postgres reports it and keeps the socket open,
 * and pg-pool forgets the client without ending it: the server waits for the rest of the exchange
 * and the open socket kept the process alive, so a command that had printed its error never exited.
 */
export class ClosingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
    if (callback === undefined) {
      return super.connect().catch((error: unknown) => {
        this.#letGo();
        throw error;
      });
    }
    super.connect((error: Error | null) => {
      if (error) this.#letGo();
      callback(error);
    });
    return undefined;
  }

  #letGo(): void {
    this.connection.stream.destroy();
  }
}
