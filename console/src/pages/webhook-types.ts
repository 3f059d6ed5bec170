/** Webhook endpoints and deliveries as `/v1/webhooks` answers them (docs/events.md#webhooks). */
export interface Webhook {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  status: 'active' | 'paused' | 'disabled';
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
  secret?: string;
}

export interface Attempt {
  id: number;
  attemptedAt: string;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
}

export interface Delivery {
  id: number;
  webhookId: number;
  eventId: number;
  eventType: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  responseStatus: number | null;
  lastError: string | null;
  createdAt: string;
  attemptLog: Attempt[];
}
