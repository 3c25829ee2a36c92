import { Suspense, useState } from 'react';
import { RouterProvider } from 'react-router';
import { FullPageSpin } from '../components/FullPageSpin';
import { createQueryClient } from '../lib/queryClient';
import { AppProviders } from './providers';
import { createAppRouter } from './router';

export function App() {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(createAppRouter);
  return (
    <AppProviders queryClient={queryClient}>
      <Suspense fallback={<FullPageSpin />}>
        <RouterProvider router={router} />
      </Suspense>
    </AppProviders>
  );
}
