import { Injectable, ServiceUnavailableException } from '@nestjs/common';

/**
 * The app's own addresses, known once it listens (PORT=0 picks the port then): the public one,
 * on which the platform's callbacks and the payer's browser come back, and the one it listens on.
 * Built from configuration, never from a request's Host header, which the sender controls.
 */
@Injectable()
export class AppUrls {
  private publicBase: string | undefined;
  private listenBase: string | undefined;

  /** Set by the bootstrap once the server listens. */
  set(publicUrl: string, listenUrl: string): void {
    this.publicBase = publicUrl.replace(/\/+$/, '');
    this.listenBase = listenUrl.replace(/\/+$/, '');
  }

  /** The public origin (PUBLIC_URL, or where it listens). */
  get public(): string {
    if (this.publicBase === undefined) throw new ServiceUnavailableException('The app is still starting');
    return this.publicBase;
  }

  /** Where it listens (for calls the app makes to itself, such as the service simulator's). */
  get listening(): string {
    if (this.listenBase === undefined) throw new ServiceUnavailableException('The app is still starting');
    return this.listenBase;
  }

  /** An absolute public URL for a path of this app. */
  to(path: string): string {
    return `${this.public}${path.startsWith('/') ? path : `/${path}`}`;
  }
}
